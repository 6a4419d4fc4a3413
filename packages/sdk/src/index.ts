import { ApiClient, type PostlineOptions } from './client.js';
import type { OperationId } from './generated/operations.js';
import { accountResource, apiKeysResource, domainsResource, usersResource, webhooksResource } from './resources/account.js';
import { importsResource, listsResource, segmentsResource, subscribersResource } from './resources/audience.js';
import { automationsResource, campaignsResource } from './resources/campaigns.js';
import { capturedResource, emailsResource, suppressionResource, templatesResource } from './resources/sending.js';

/**
 * The Postline API client: `new Postline({ apiKey, baseUrl })`, then resources that read as
 * the API does (`postline.emails.send({...})`, `postline.campaigns.create(...)`,
 * `for await (const s of postline.subscribers.list({ list }))`). Failures throw PostlineError.
 */
export class Postline {
  readonly emails;
  readonly captured;
  readonly suppression;
  readonly templates;
  readonly lists;
  readonly subscribers;
  readonly imports;
  readonly segments;
  readonly campaigns;
  readonly automations;
  readonly account;
  readonly users;
  readonly apiKeys;
  readonly domains;
  readonly webhooks;
  private readonly api: ApiClient;

  constructor(options: PostlineOptions) {
    this.api = new ApiClient(options);
    this.emails = emailsResource(this.api);
    this.captured = capturedResource(this.api);
    this.suppression = suppressionResource(this.api);
    this.templates = templatesResource(this.api);
    this.lists = listsResource(this.api);
    this.subscribers = subscribersResource(this.api);
    this.imports = importsResource(this.api);
    this.segments = segmentsResource(this.api);
    this.campaigns = campaignsResource(this.api);
    this.automations = automationsResource(this.api);
    this.account = accountResource(this.api);
    this.users = usersResource(this.api);
    this.apiKeys = apiKeysResource(this.api);
    this.domains = domainsResource(this.api);
    this.webhooks = webhooksResource(this.api);
  }

  /** The operationIds this client has a method for (what the coverage test compares with the document). */
  coveredOperations(): ReadonlySet<OperationId> {
    return this.api.covered;
  }
}

export { PostlineError, type FieldError } from './errors.js';
export { verifyWebhook } from './webhooks.js';
export { Paginated, type Page } from './pagination.js';
export { NOT_COVERED } from './not-covered.js';
export { OPERATIONS, type OperationId } from './generated/operations.js';
export type { PostlineOptions } from './client.js';
export type { Body, Query, Result, Item, RequestOptions } from './types.js';
export type { components, operations, paths } from './generated/openapi.js';
