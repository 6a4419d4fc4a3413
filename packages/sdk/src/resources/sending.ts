import type { ApiClient } from '../client.js';
import type { Body, Query, RequestOptions } from '../types.js';

type ListQuery<Q> = Omit<Q, 'cursor'>;

/** Transactional email: send one or a batch, look them up, read the bytes that left. */
export function emailsResource(api: ApiClient) {
  const send = api.operation('sendEmail');
  const sendBatch = api.operation('sendEmailBatch');
  const list = api.list('listEmails');
  const get = api.operation('getEmail');
  const raw = api.operation('getEmailRawSource');
  return {
    /** POST /api/v1/emails: `queued` (or `scheduled`); with a test key `sandbox: true` and nothing sent. */
    send: (email: Body<'sendEmail'>, options?: RequestOptions) => send({ body: email }, options),
    /** POST /api/v1/emails/batch: up to 500, each answered on its own (`{index, id…}` or `{index, error}`). */
    sendBatch: (emails: Body<'sendEmailBatch'>['emails'], options?: RequestOptions) => sendBatch({ body: { emails } }, options),
    list: (query: ListQuery<Query<'listEmails'>> = {}, options?: RequestOptions) => list({ query }, options),
    /** One send by any of its recipients' ids, with every recipient's status and the event timeline. */
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    /** The message's MIME source as delivered (message/rfc822). */
    raw: (id: string, options?: RequestOptions) => raw({ path: { id } }, options) as unknown as Promise<string>,
  };
}

/** Messages kept by POSTLINE_DELIVERY=capture instead of being delivered (development). */
export function capturedResource(api: ApiClient) {
  const list = api.list('listCapturedMessages');
  const get = api.operation('getCapturedMessage');
  return {
    list: (query: ListQuery<Query<'listCapturedMessages'>> = {}, options?: RequestOptions) => list({ query }, options),
    /** The captured message's MIME source. */
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options) as unknown as Promise<string>,
  };
}

export function suppressionResource(api: ApiClient) {
  const list = api.list('listSuppressions');
  const add = api.operation('createSuppressions');
  const remove = api.operation('deleteSuppression');
  return {
    list: (query: ListQuery<Query<'listSuppressions'>> = {}, options?: RequestOptions) => list({ query }, options),
    /** One address (`{email, reason}`) or many (`{entries}`). */
    add: (entry: Body<'createSuppressions'>, options?: RequestOptions) => add({ body: entry }, options),
    remove: (email: string, options?: RequestOptions) => remove({ query: { email } }, options),
  };
}

export function templatesResource(api: ApiClient) {
  const list = api.list('listTemplates');
  const create = api.operation('createTemplate');
  const folders = api.operation('listTemplateFolders');
  const get = api.operation('getTemplate');
  const update = api.operation('updateTemplate');
  const remove = api.operation('deleteTemplate');
  const render = api.operation('renderTemplate');
  return {
    list: (query: ListQuery<Query<'listTemplates'>> = {}, options?: RequestOptions) => list({ query }, options),
    create: (template: Body<'createTemplate'>, options?: RequestOptions) => create({ body: template }, options),
    folders: (options?: RequestOptions) => folders({}, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    update: (id: string, changes: Body<'updateTemplate'>, options?: RequestOptions) => update({ path: { id }, body: changes }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
    render: (id: string, input: Body<'renderTemplate'>, options?: RequestOptions) => render({ path: { id }, body: input }, options),
  };
}
