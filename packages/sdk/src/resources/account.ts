import type { ApiClient } from '../client.js';
import type { Body, Query, RequestOptions } from '../types.js';

type ListQuery<Q> = Omit<Q, 'cursor'>;

/** The account behind the key, its sending health and statistics. */
export function accountResource(api: ApiClient) {
  const me = api.operation('getMe');
  const health = api.operation('getAccountHealth');
  const stats = api.operation('getStats');
  const acknowledge = api.operation('acknowledgeHealth');
  const sources = api.operation('listSendingSources');
  const delivery = api.operation('getDeliveryStatus');
  return {
    get: (options?: RequestOptions) => me({}, options),
    health: (query: Query<'getAccountHealth'> = {}, options?: RequestOptions) => health({ query }, options),
    stats: (query: Query<'getStats'> = {}, options?: RequestOptions) => stats({ query }, options),
    /** Acknowledges the current health warning (the dashboard's banner). */
    acknowledgeHealth: (options?: RequestOptions) => acknowledge({}, options),
    /** The sending sources of this account's pools, with their warm-up and reverse-DNS checks. */
    sendingSources: (options?: RequestOptions) => sources({}, options),
    /** The deployment's traffic shaping per destination: connections, rate, suspensions. */
    deliveryStatus: (options?: RequestOptions) => delivery({}, options),
  };
}

export function usersResource(api: ApiClient) {
  const list = api.list('listUsers');
  const create = api.operation('createUser');
  const get = api.operation('getUser');
  const update = api.operation('updateUser');
  const remove = api.operation('deleteUser');
  return {
    list: (query: ListQuery<Query<'listUsers'>> = {}, options?: RequestOptions) => list({ query }, options),
    create: (user: Body<'createUser'>, options?: RequestOptions) => create({ body: user }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    update: (id: string, changes: Body<'updateUser'>, options?: RequestOptions) => update({ path: { id }, body: changes }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
  };
}

export function apiKeysResource(api: ApiClient) {
  const list = api.list('listApiKeys');
  const create = api.operation('createApiKey');
  const get = api.operation('getApiKey');
  const revoke = api.operation('revokeApiKey');
  return {
    list: (query: ListQuery<Query<'listApiKeys'>> = {}, options?: RequestOptions) => list({ query }, options),
    /** The new key's secret is in this answer only. */
    create: (key: Body<'createApiKey'>, options?: RequestOptions) => create({ body: key }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    revoke: (id: string, options?: RequestOptions) => revoke({ path: { id } }, options),
  };
}

export function domainsResource(api: ApiClient) {
  const list = api.list('listDomains');
  const create = api.operation('createDomain');
  const get = api.operation('getDomain');
  const remove = api.operation('deleteDomain');
  const verify = api.operation('verifyDomain');
  const verifyTracking = api.operation('verifyDomainTracking');
  const markVerified = api.operation('markDomainVerified');
  return {
    list: (query: ListQuery<Query<'listDomains'>> = {}, options?: RequestOptions) => list({ query }, options),
    /** Adds a sending domain; the answer lists the DNS records to publish. */
    create: (domain: Body<'createDomain'>, options?: RequestOptions) => create({ body: domain }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
    verify: (id: string, options?: RequestOptions) => verify({ path: { id } }, options),
    verifyTracking: (id: string, options?: RequestOptions) => verifyTracking({ path: { id } }, options),
    /** Marks the domain verified without checking DNS (an operator's override). */
    markVerified: (id: string, options?: RequestOptions) => markVerified({ path: { id } }, options),
  };
}

export function webhooksResource(api: ApiClient) {
  const create = api.operation('createHook');
  const list = api.list('listHooks');
  const get = api.operation('getHook');
  const remove = api.operation('deleteHook');
  const deliveries = api.list('listHookDeliveries');
  const enable = api.operation('enableHook');
  const rotate = api.operation('rotateHookSecret');
  const test = api.operation('testHook');
  return {
    /** The hook's signing secret is in this answer only (verify requests with verifyWebhook). */
    create: (hook: Body<'createHook'>, options?: RequestOptions) => create({ body: hook }, options),
    list: (query: ListQuery<Query<'listHooks'>> = {}, options?: RequestOptions) => list({ query }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
    deliveries: (id: string, query: ListQuery<Query<'listHookDeliveries'>> = {}, options?: RequestOptions) => deliveries({ path: { id }, query }, options),
    enable: (id: string, options?: RequestOptions) => enable({ path: { id } }, options),
    rotateSecret: (id: string, options?: RequestOptions) => rotate({ path: { id } }, options),
    test: (id: string, options?: RequestOptions) => test({ path: { id } }, options),
  };
}
