import type { ApiClient } from '../client.js';
import type { Body, Query, RequestOptions } from '../types.js';

type ListQuery<Q> = Omit<Q, 'cursor'>;

export function listsResource(api: ApiClient) {
  const list = api.list('listLists');
  const create = api.operation('createList');
  const get = api.operation('getList');
  const update = api.operation('updateList');
  const remove = api.operation('deleteList');
  return {
    list: (query: ListQuery<Query<'listLists'>> = {}, options?: RequestOptions) => list({ query }, options),
    create: (list: Body<'createList'>, options?: RequestOptions) => create({ body: list }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    update: (id: string, changes: Body<'updateList'>, options?: RequestOptions) => update({ path: { id }, body: changes }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
  };
}

/** Subscribers are addressed by id or by email address. */
export function subscribersResource(api: ApiClient) {
  const list = api.list('listSubscribers');
  const upsert = api.operation('upsertSubscriber');
  const get = api.operation('getSubscriber');
  const update = api.operation('updateSubscriber');
  const remove = api.operation('deleteSubscriber');
  const importing = api.operation('importSubscribers');
  return {
    /** Every subscriber matching the filter, page after page: `for await (const s of postline.subscribers.list({ list }))`. */
    list: (query: ListQuery<Query<'listSubscribers'>> = {}, options?: RequestOptions) => list({ query }, options),
    /** Creates the subscriber, or updates the one with this email (201 or 200). */
    upsert: (subscriber: Body<'upsertSubscriber'>, options?: RequestOptions) => upsert({ body: subscriber }, options),
    get: (idOrEmail: string, options?: RequestOptions) => get({ path: { idOrEmail } }, options),
    update: (idOrEmail: string, changes: Body<'updateSubscriber'>, options?: RequestOptions) => update({ path: { idOrEmail }, body: changes }, options),
    delete: (idOrEmail: string, options?: RequestOptions) => remove({ path: { idOrEmail } }, options),
    /** A bulk import: a JSON body, or CSV text with `query.list` naming the list. Answered 202; follow it with imports.get. */
    import: (input: Body<'importSubscribers'> | string, query: Query<'importSubscribers'> = {}, options?: RequestOptions) =>
      importing({ body: input, query }, options),
  };
}

export function importsResource(api: ApiClient) {
  const list = api.list('listImports');
  const get = api.operation('getImport');
  return {
    list: (query: ListQuery<Query<'listImports'>> = {}, options?: RequestOptions) => list({ query }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
  };
}

export function segmentsResource(api: ApiClient) {
  const list = api.list('listSegments');
  const create = api.operation('createSegment');
  const count = api.operation('countSegment');
  const get = api.operation('getSegment');
  const update = api.operation('updateSegment');
  const remove = api.operation('deleteSegment');
  const subscribers = api.list('listSegmentSubscribers');
  return {
    list: (query: ListQuery<Query<'listSegments'>> = {}, options?: RequestOptions) => list({ query }, options),
    create: (segment: Body<'createSegment'>, options?: RequestOptions) => create({ body: segment }, options),
    /** How many subscribers a rule matches, without saving it. */
    count: (rule: Body<'countSegment'>, options?: RequestOptions) => count({ body: rule }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    update: (id: string, changes: Body<'updateSegment'>, options?: RequestOptions) => update({ path: { id }, body: changes }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
    subscribers: (id: string, query: ListQuery<Query<'listSegmentSubscribers'>> = {}, options?: RequestOptions) => subscribers({ path: { id }, query }, options),
  };
}
