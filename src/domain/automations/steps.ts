import type { Config } from '../../config.js';
import { mergeContext } from '../merge/context.js';
import type { PoolClient, Queryable } from '../../db/pool.js';
import { insertAutomationSend, type RunRow } from '../../db/queries/automations/runs.js';
import { selectSubscriberByKey, selectSuppressionReason } from '../../db/queries/subscribers.js';
import { AppError } from '../../errors.js';
import type { SendingDomain } from '../domains/domains.js';
import { sendEmail } from '../sending/sending.js';
import type { TrackingLinks } from '../tracking/links.js';
import type { SendStep, UpdateSubscriberStep } from './definition.js';

/** The steps with effects outside the run: sending a message, changing the subscriber. */

/**
 * The audience's writes an update_subscriber step performs (audience/subscribers.ts's
 * subscriberWritesForAutomations). Passed in by whoever runs the engine: automations sit below
 * the audience, whose changes fire their built-in events.
 */
export interface SubscriberWrites {
  /** Creates or updates the subscriber with this address, adding the lists; merges attributes. */
  upsert(db: Queryable, accountId: string, input: { email: string; lists?: string[]; attributes?: Record<string, unknown> }, now: Date): Promise<{ subscriber: { id: string }; created: boolean }>;
  removeLists(db: Queryable, accountId: string, subscriberId: string, lists: string[], now: Date): Promise<void>;
}

export interface StepContext {
  db: PoolClient;
  config: Config;
  links: TrackingLinks;
  now: Date;
  monthlyQuota: number | null;
  /** The verified domain of a From address, looked up once per engine pass. */
  findDomain: (accountId: string, fromEmail: string) => Promise<SendingDomain | null>;
  subscribers: SubscriberWrites;
}

export type SendOutcome =
  | { outcome: 'sent'; messageId: string; record: (automationId: string, path: string) => Promise<void> }
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'failed'; reason: string; error?: string };

/** Statuses whose owner asked (or whose mailbox told us) not to be mailed. */
const NOT_MAILABLE = new Set(['unsubscribed', 'bounced', 'complained']);

/**
 * One message through the normal sending pipeline (sending.ts: template, rendering, verified
 * domain, suppression, quota, tracking, the `sent` event), queued in the engine's transaction.
 * An address that is suppressed or whose subscriber unsubscribed is skipped, not failed: the
 * run goes on (a later condition or exit decides). Any other refusal fails the run with the
 * reason, e.g. the sender domain lost its verification or the template was deleted.
 */
export async function performSend(ctx: StepContext, run: RunRow, step: SendStep): Promise<SendOutcome> {
  // Whether the address may be mailed at all comes first: a send that would be skipped is
  // skipped, whatever else is wrong with it (a deleted template, an unverified domain), so a
  // suppressed address never fails a run. sendEmail checks suppression again, after
  // rendering, in the same transaction; this earlier look only decides the order.
  const subscriber = await selectSubscriberByKey(ctx.db, run.account_id, run.email_key);
  if (subscriber && NOT_MAILABLE.has(subscriber.status)) return { outcome: 'skipped', reason: `subscriber ${subscriber.status}` };
  if ((await selectSuppressionReason(ctx.db, run.account_id, run.email_key)) !== null) return { outcome: 'skipped', reason: 'suppressed' };
  // The shared merge context: the trigger's data at the top level and as `data`, `email`, and
  // `subscriber` when the address is a subscriber (docs/templates.md, "Merge fields").
  const variables = mergeContext({ data: run.data, email: run.email, subscriber }) as Record<string, unknown>;
  try {
    const result = await sendEmail(
      { db: ctx.db, config: ctx.config, links: ctx.links, accountId: run.account_id, mode: 'live', monthlyQuota: ctx.monthlyQuota, now: ctx.now,
        findDomain: ctx.findDomain },
      {
        to: run.email, from: step.from, subject: step.subject, html: step.html, text: step.text, templateId: step.templateId,
        ...(step.replyTo ? { replyTo: step.replyTo } : {}), variables,
      },
    );
    const messageId = result.id;
    return {
      outcome: 'sent',
      messageId,
      record: (automationId, path) => insertAutomationSend(ctx.db, { messageId, accountId: run.account_id, automationId, runId: run.id, path }),
    };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    if (err.code === 'recipient_suppressed') return { outcome: 'skipped', reason: 'suppressed' };
    return { outcome: 'failed', reason: err.code, error: err.message };
  }
}

/** Creates the subscriber when needed, adds and removes lists, merges attributes. */
export async function performUpdateSubscriber(ctx: StepContext, run: RunRow, step: UpdateSubscriberStep): Promise<Record<string, unknown>> {
  const { subscriber, created } = await ctx.subscribers.upsert(ctx.db, run.account_id, {
    email: run.email,
    ...(step.lists?.add ? { lists: step.lists.add } : {}),
    ...(step.attributes ? { attributes: step.attributes } : {}),
  }, ctx.now);
  if (step.lists?.remove && step.lists.remove.length > 0) {
    await ctx.subscribers.removeLists(ctx.db, run.account_id, subscriber.id, step.lists.remove, ctx.now);
  }
  return { subscriberId: subscriber.id, created };
}
