import type { ApiClient } from '../client.js';
import type { Body, Query, RequestOptions } from '../types.js';

type ListQuery<Q> = Omit<Q, 'cursor'>;

export function campaignsResource(api: ApiClient) {
  const list = api.list('listCampaigns');
  const create = api.operation('createCampaign');
  const get = api.operation('getCampaign');
  const update = api.operation('updateCampaign');
  const remove = api.operation('deleteCampaign');
  const send = api.operation('sendCampaign');
  const pause = api.operation('pauseCampaign');
  const resume = api.operation('resumeCampaign');
  const cancel = api.operation('cancelCampaign');
  const test = api.operation('sendCampaignTest');
  const recipients = api.list('listCampaignRecipients');
  const preview = api.operation('previewCampaign');
  return {
    list: (query: ListQuery<Query<'listCampaigns'>> = {}, options?: RequestOptions) => list({ query }, options),
    create: (campaign: Body<'createCampaign'>, options?: RequestOptions) => create({ body: campaign }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    update: (id: string, changes: Body<'updateCampaign'>, options?: RequestOptions) => update({ path: { id }, body: changes }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
    /** Starts sending now (or at its scheduled time). */
    send: (id: string, options?: RequestOptions) => send({ path: { id } }, options),
    pause: (id: string, options?: RequestOptions) => pause({ path: { id } }, options),
    resume: (id: string, options?: RequestOptions) => resume({ path: { id } }, options),
    cancel: (id: string, options?: RequestOptions) => cancel({ path: { id } }, options),
    /** A test copy to the given addresses. */
    test: (id: string, input: Body<'sendCampaignTest'>, options?: RequestOptions) => test({ path: { id }, body: input }, options),
    /** The campaign rendered as a recipient would see it. */
    preview: (id: string, query: Query<'previewCampaign'> = {}, options?: RequestOptions) => preview({ path: { id }, query }, options),
    recipients: (id: string, query: ListQuery<Query<'listCampaignRecipients'>> = {}, options?: RequestOptions) => recipients({ path: { id }, query }, options),
  };
}

export function automationsResource(api: ApiClient) {
  const list = api.list('listAutomations');
  const create = api.operation('createAutomation');
  const get = api.operation('getAutomation');
  const update = api.operation('updateAutomation');
  const remove = api.operation('deleteAutomation');
  const trigger = api.operation('triggerAutomations');
  const runs = api.list('listAutomationRuns');
  const getRun = api.operation('getAutomationRun');
  const cancelRun = api.operation('cancelAutomationRun');
  return {
    list: (query: ListQuery<Query<'listAutomations'>> = {}, options?: RequestOptions) => list({ query }, options),
    create: (automation: Body<'createAutomation'>, options?: RequestOptions) => create({ body: automation }, options),
    get: (id: string, options?: RequestOptions) => get({ path: { id } }, options),
    update: (id: string, changes: Body<'updateAutomation'>, options?: RequestOptions) => update({ path: { id }, body: changes }, options),
    delete: (id: string, options?: RequestOptions) => remove({ path: { id } }, options),
    /** An event of your app (`{event, email, data}`) that starts the automations listening for it. */
    trigger: (event: Body<'triggerAutomations'>, options?: RequestOptions) => trigger({ body: event }, options),
    runs: (id: string, query: ListQuery<Query<'listAutomationRuns'>> = {}, options?: RequestOptions) => runs({ path: { id }, query }, options),
    getRun: (id: string, runId: string, options?: RequestOptions) => getRun({ path: { id, runId } }, options),
    cancelRun: (id: string, runId: string, options?: RequestOptions) => cancelRun({ path: { id, runId } }, options),
  };
}
