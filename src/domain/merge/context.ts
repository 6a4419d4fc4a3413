/**
 * The merge context: one set of names every message renders with, whether it comes from
 * POST /emails, a campaign or an automation (docs/templates.md, "Merge fields"). Built here only,
 * so the template editor, the campaign runner and the automation engine cannot drift apart.
 *
 *   <caller's names>   an API send's `variables`, a campaign's `variables`, a trigger's `data`
 *   data.*             an automation trigger's data again, under its own name
 *   email              the recipient's address
 *   subscriber.*       email, name, id, status, attributes.<key> — when the recipient is a subscriber
 *   unsubscribe_url    the recipient's own unsubscribe link
 */
import type { TemplateVariables } from '../../templates/index.js';

/** The fields of `subscriber` a template may name (attributes: any key below it). */
export const SUBSCRIBER_FIELDS = ['email', 'name', 'id', 'status', 'attributes'] as const;

export interface MergeSubscriber {
  id: string;
  email: string;
  name: string | null;
  status: string;
  attributes: Record<string, unknown>;
}

export interface MergeInput {
  /** The caller's values, at the top level. */
  values?: Record<string, unknown>;
  /** An automation trigger's data: at the top level and as `data`. */
  data?: Record<string, unknown>;
  email: string;
  subscriber?: MergeSubscriber | null;
  unsubscribeUrl?: string;
}

/**
 * The context for one recipient. The names the platform provides come after the caller's,
 * so `{{ email }}` is always the recipient; an API send's own `variables` are the exception
 * (mergeSendVariables), because that contract predates the shared context.
 */
export function mergeContext(input: MergeInput): TemplateVariables {
  return {
    ...input.data,
    ...input.values,
    ...(input.data !== undefined ? { data: input.data } : {}),
    email: input.email,
    ...(input.subscriber ? { subscriber: subscriberFields(input.subscriber) } : {}),
    ...(input.unsubscribeUrl !== undefined ? { unsubscribe_url: input.unsubscribeUrl } : {}),
  };
}

/**
 * POST /emails: the request's `variables` exactly as given (the `{{merge_field}}` contract), with
 * `email` and `subscriber` filled in only where the request did not name them, and the
 * platform's `unsubscribe_url`.
 */
export function mergeSendVariables(
  variables: Record<string, unknown> | undefined,
  to: string,
  subscriber: MergeSubscriber | null,
  unsubscribeUrl: string,
): TemplateVariables {
  return {
    email: to,
    ...(subscriber ? { subscriber: subscriberFields(subscriber) } : {}),
    ...variables,
    unsubscribe_url: unsubscribeUrl,
  };
}

function subscriberFields(s: MergeSubscriber): MergeSubscriber {
  return { id: s.id, email: s.email, name: s.name, status: s.status, attributes: s.attributes };
}
