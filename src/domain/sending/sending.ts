import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import {
  findSendsByIdempotencyRef, insertAcceptedMessages, isDuplicateIdempotentSend, isRemovedSenderDomain, SUPPRESSED_ROW, type MessageRow, type SentEventRow,
} from '../../db/queries/messages.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { selectSubscriberByKey } from '../../db/queries/subscribers.js';
import { TemplateCache } from '../../templates/cache.js';
import { fieldsOf, type Template } from '../../templates/index.js';
import type { MergeWarning } from '../merge/checks.js';
import { mergeSendVariables, type MergeSubscriber } from '../merge/context.js';
import { findSendingDomain, type SendingDomain } from '../domains/domains.js';
import { checkAddresses, checkAttachments, checkContent, checkRawSubject, checkSchedule, type SendRequest } from './send-input.js';
import { emailKey } from '../email-address.js';
import { isSuppressed, suppressedAmong } from '../suppression.js';
import { emptyFieldCollector, renderCompiledTemplate, requireTemplateForSend } from '../stored-templates.js';
import type { TrackingLinks } from '../tracking/links.js';

export interface SendContext {
  db: Queryable;
  config: Config;
  links: TrackingLinks;
  accountId: string;
  mode: 'live' | 'test';
  monthlyQuota: number | null;
  now: Date;
  /** How to find the verified From domain; the API passes a short-lived cache of it. */
  findDomain?: (accountId: string, fromEmail: string) => Promise<SendingDomain | null>;
  /**
   * How to store one accepted live send of an account without a quota, checking its
   * recipients against the suppression list in the same statement (insertSendsUnlessSuppressed:
   * `keys` are the rows' suppression keys); resolves to the ids of the suppressed rows. The API
   * passes a group commit that writes concurrent accepts in one statement. Without it, the
   * suppression list is read first and the send written alone.
   */
  storeAccepted?: (rows: MessageRow[], keys: (string | null)[], events: SentEventRow[]) => Promise<Set<string>>;
  /** Which of `emails` are suppressed; the API passes lookups batched across its concurrent requests. */
  suppressedAmong?: (accountId: string, emails: readonly string[]) => Promise<Set<string>>;
  /**
   * The Idempotency-Key claim the request runs under (http/plugins/idempotency.ts). Its ref is
   * stored on the send's `to` row by the statement that stores the send, so a request that
   * took the claim over from a dead owner (`takenOver`) first looks for what that owner
   * committed and answers with it (docs/decisions/0029-idempotency-lease.md).
   */
  idempotency?: { ref: string; takenOver: boolean };
}

/**
 * The request's own subject/html/text parsed once per source for the process: integrations
 * send the same content with new variables on every request. At most 4 M characters of source.
 */
const ownTemplates = new TemplateCache({ maxChars: 4_000_000, maxEntryChars: 512 * 1024 });

/** One accepted send: a row per envelope recipient (the `to` row first) and their `sent` events. */
export interface PreparedSend {
  rows: MessageRow[];
  events: SentEventRow[];
  warnings: MergeWarning[];
}

export type EnvelopeRecipient = { email: string; type: 'to' | 'cc' | 'bcc' };

/** The envelope recipients of a send, each address once (the first way it was named wins). */
export function envelopeRecipients(req: Pick<SendRequest, 'to' | 'cc' | 'bcc'>): EnvelopeRecipient[] {
  const seen = new Set<string>();
  const out: EnvelopeRecipient[] = [];
  const add = (email: string, type: 'to' | 'cc' | 'bcc') => {
    const key = emailKey(email) ?? email.toLowerCase();
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ email, type });
  };
  add(req.to, 'to');
  req.cc?.forEach((a) => add(a, 'cc'));
  req.bcc?.forEach((a) => add(a, 'bcc'));
  return out;
}

/**
 * One send's answer. A test key gets the live key's shape (an `sbx_` id, nothing stored) with
 * `sandbox: true`. `warnings` names placeholders that rendered empty without a fallback.
 */
export interface SendResult {
  sandbox: boolean;
  id: string;
  status: 'queued' | 'scheduled';
  to: string;
  subject: string;
  warnings: MergeWarning[];
}

interface Rendered {
  subject: string;
  html: string | null;
  text: string | null;
  warnings: MergeWarning[];
}

/**
 * Renders subject, html and text: the template's parts, overridden by any the request gives,
 * all rendered with the merge context (domain/merge/context.ts): the request's variables,
 * `email`, `subscriber` when the content names it and the recipient is a subscriber, and
 * `unsubscribe_url`. Placeholders that print nothing without a fallback come back as warnings.
 */
async function renderContent(ctx: SendContext, req: SendRequest, unsubscribeUrl: () => string): Promise<Rendered> {
  // Submitted mail (SMTP) is the message as written: `{{` in it is text, not a placeholder.
  if (req.submitted) return { subject: req.subject ?? '', html: req.html ?? null, text: req.text ?? null, warnings: [] };
  const template = req.templateId ? await requireTemplateForSend(ctx.db, ctx.accountId, req.templateId) : null;
  const own = (source: string | undefined) => (source === undefined ? null : ownTemplates.compile(source));
  const parts = {
    subject: own(req.subject) ?? template?.subject ?? null,
    html: own(req.html) ?? template?.html ?? null,
    text: own(req.text) ?? template?.text ?? null,
  };
  const subscriber = await subscriberIfNamed(ctx, req, parts);
  // The signed URL is made only for content that prints it: unused, it would be a MAC per send for nothing.
  const variables = mergeSendVariables(req.variables, req.to, subscriber, names(parts, 'unsubscribe_url') ? unsubscribeUrl() : '');
  const empty = emptyFieldCollector();
  const rendered = renderCompiledTemplate(parts, variables, empty.onEmpty);
  return { subject: rendered.subject ?? '', html: rendered.html, text: rendered.text, warnings: empty.warnings() };
}

/**
 * Whether any part uses a field whose first name is `head`; read from each parsed template's
 * own field list (found once per template), so a send allocates nothing for it.
 */
function names(parts: Record<string, Template | null>, head: string): boolean {
  for (const part of Object.values(parts)) {
    if (part !== null && fieldsOf(part).some((u) => u.head === head)) return true;
  }
  return false;
}

/** The recipient as a subscriber, looked up only when the content names `subscriber` and the request did not give one. */
async function subscriberIfNamed(ctx: SendContext, req: SendRequest, parts: Record<string, Template | null>): Promise<MergeSubscriber | null> {
  if (req.variables && Object.prototype.hasOwnProperty.call(req.variables, 'subscriber')) return null;
  if (!names(parts, 'subscriber')) return null;
  const key = emailKey(req.to);
  return key ? selectSubscriberByKey(ctx.db, ctx.accountId, key) : null;
}

/** The account's monthly quota as the storing statement checks it, or null without one. */
export function monthlyQuotaOf(ctx: SendContext): Parameters<typeof insertAcceptedMessages>[3] {
  return ctx.monthlyQuota === null ? null : { accountId: ctx.accountId, month: monthOf(ctx.now), limit: ctx.monthlyQuota };
}

/** First day of the next month, UTC: when a monthly quota resets. */
export function quotaResetsAt(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

export function quotaExceededError(ctx: SendContext): AppError {
  const retryAfter = Math.ceil((quotaResetsAt(ctx.now).getTime() - ctx.now.getTime()) / 1000);
  return new AppError('quota_exceeded', `Monthly quota of ${ctx.monthlyQuota} messages used up; it resets on the 1st (UTC)`, { retryAfter });
}

export function monthOf(now: Date): string {
  return now.toISOString().slice(0, 7) + '-01';
}

/**
 * Validates one send request and prepares its row, in the order docs/sending.md gives: schema (by
 * the route), addresses and headers, the verified sender domain, template and rendering, the
 * suppression list. Each step throws an AppError and stops; test keys run them all and get a
 * sandbox result instead of a row.
 */
export async function prepareSend(ctx: SendContext, req: SendRequest): Promise<PreparedSend | SendResult> {
  checkAddresses(req);
  checkRawSubject(req);
  const scheduledAt = checkSchedule(req, ctx.now);
  checkAttachments(req);
  // Test keys go through every check a live key does (docs/api-keys.md: same validation, same
  // errors) and stop just before anything is stored.
  const domain = await (ctx.findDomain ?? ((a, f) => findSendingDomain(ctx.db, a, f)))(ctx.accountId, req.from.email);
  if (!domain) throw unverifiedSenderError(req.from.email);
  const id = newId(ctx.mode === 'test' ? 'sbx' : 'msg');
  const content = await renderContent(ctx, req, () => (ctx.mode === 'test' ? `${ctx.config.baseUrl}/u/sandbox` : ctx.links.unsubscribe(id, domain.trackingHost)));
  checkContent(req, content);
  // `strict`: a placeholder with no value and no fallback refuses the send instead of a warning.
  if (req.strict && content.warnings.length > 0) {
    throw new AppError('template_error', `${content.warnings.map((w) => `{{ ${w.field} }}`).join(', ')} ${content.warnings.length === 1 ? 'has' : 'have'} no value and no fallback (strict send)`, { errors: content.warnings });
  }
  const recipients = envelopeRecipients(req);
  const suppressed = await suppressedRecipients(ctx, req, recipients);
  refuseIfAllSuppressed(req, recipients, suppressed);
  if (ctx.mode === 'test') return { sandbox: true, id, status: scheduledAt ? 'scheduled' : 'queued', to: req.to, subject: content.subject, warnings: content.warnings };
  return sendRows(ctx, req, id, domain.id, scheduledAt, content, recipients, suppressed);
}

/**
 * The envelope recipients on the account's suppression list. A live send stored by
 * storeAccepted is checked by the storing statement itself (its rows are built as if none were
 * suppressed and that statement marks them); every other send reads the list first.
 */
async function suppressedRecipients(ctx: SendContext, req: SendRequest, recipients: EnvelopeRecipient[]): Promise<Set<string>> {
  return suppressionCheckedOnStore(ctx)
    ? new Set<string>()
    : ctx.suppressedAmong
      ? await ctx.suppressedAmong(ctx.accountId, recipients.map((r) => r.email))
      : recipients.length === 1
        ? ((await isSuppressed(ctx.db, ctx.accountId, req.to)) ? new Set([req.to]) : new Set<string>())
        : new Set((await suppressedAmong(ctx.db, ctx.accountId, recipients.map((r) => r.email))).keys());
}

/**
 * A live send's rows, one per envelope recipient (the `to` row, with the send's id, first), and
 * the `sent` event of each recipient that is not suppressed.
 */
function sendRows(
  ctx: SendContext, req: SendRequest, id: string, domainId: string, scheduledAt: Date | null, content: Rendered,
  recipients: EnvelopeRecipient[], suppressed: Set<string>,
): PreparedSend {
  const rows: MessageRow[] = [];
  const events: SentEventRow[] = [];
  const group = recipients.length > 1;
  const shownTo = req.submitted?.headerTo;
  const headerTo = shownTo && !(shownTo.length === 1 && shownTo[0] === req.to) ? shownTo.join(', ') : null;
  for (const r of recipients) {
    const rowId = r.type === 'to' ? id : newId('msg');
    const isSuppressedHere = suppressed.has(r.email);
    const status = isSuppressedHere ? SUPPRESSED_ROW.status : scheduledAt ? 'scheduled' : 'queued';
    const copy = r.type !== 'to';
    rows.push({
      id: rowId,
      account_id: ctx.accountId,
      domain_id: domainId,
      status,
      from_email: req.from.email,
      from_name: req.from.name ?? null,
      to_email: r.email,
      to_domain: (emailKey(r.email) ?? r.email).split('@')[1],
      cc: req.submitted ? req.submitted.headerCc : (req.cc ?? []),
      // Only the `to` row lists the bcc addresses (for GET /emails/{id}); no row ever puts them in a header.
      bcc: copy ? [] : (req.bcc ?? []),
      reply_to: req.replyTo ?? null,
      subject: content.subject,
      // cc/bcc copies read their content from the group's `to` row (migration 011).
      html: copy ? null : content.html,
      text: copy ? null : content.text,
      headers: req.headers ?? {},
      attachments: copy ? [] : (req.attachments ?? []),
      tags: req.tags ?? [],
      template_id: req.templateId ?? null,
      campaign_id: null,
      attempts: 0,
      next_attempt_at: scheduledAt ?? ctx.now,
      first_attempt_at: null,
      last_response: isSuppressedHere ? SUPPRESSED_ROW.last_response : null,
      last_mx: null,
      locked_by: null,
      scheduled_at: scheduledAt,
      delivered_at: null,
      created_at: ctx.now,
      group_id: group ? id : null,
      recipient_type: r.type,
      header_to: headerTo ?? (copy ? req.to : null),
      track_opens: req.tracking?.opens !== false,
      track_clicks: req.tracking?.clicks !== false,
    });
    if (isSuppressedHere) continue;
    events.push({
      id: newId('evt'),
      account_id: ctx.accountId,
      message_id: rowId,
      type: 'sent',
      email: r.email,
      url: null,
      data: { ...(scheduledAt ? { scheduledAt: scheduledAt.toISOString() } : {}), ...(group ? { groupId: id, recipientType: r.type } : {}) },
      occurred_at: ctx.now,
    });
  }
  return { rows, events, warnings: content.warnings };
}

/** Whether the statement that stores this send also checks the suppression list (storeAccepted). */
function suppressionCheckedOnStore(ctx: SendContext): boolean {
  return ctx.mode === 'live' && ctx.monthlyQuota === null && ctx.storeAccepted !== undefined;
}

/**
 * Suppression is per recipient: a suppressed cc/bcc (or `to`) gets a row with status
 * 'suppressed' and is not delivered; only a send whose every recipient is suppressed is
 * refused (as Postmark does with inactive recipients).
 */
function refuseIfAllSuppressed(req: SendRequest, recipients: EnvelopeRecipient[], suppressed: Set<string>): void {
  if (!recipients.every((r) => suppressed.has(r.email))) return;
  throw new AppError('recipient_suppressed', `${recipients.map((r) => r.email).join(', ')} ${recipients.length === 1 ? 'is' : 'are all'} on this account's suppression list`, {
    errors: recipients.map((r) => ({ field: fieldOf(req, r), message: 'is suppressed' })),
  });
}

function fieldOf(req: SendRequest, r: EnvelopeRecipient): string {
  if (r.type === 'to') return 'to';
  return `${r.type}[${(r.type === 'cc' ? req.cc : req.bcc)!.indexOf(r.email)}]`;
}

/** Rows that count against the monthly quota: every recipient the send will be delivered to. */
export function deliverableRows(p: PreparedSend): number {
  return p.rows.filter((r) => r.status !== 'suppressed').length;
}

/**
 * The answer for an accepted message. A message found already committed (a taken-over
 * idempotent send) was not rendered by this request: its warnings are not known, so none.
 */
export function acceptedResult(row: Pick<MessageRow, 'id' | 'to_email' | 'subject' | 'scheduled_at'>, warnings: MergeWarning[] = []): SendResult {
  return { sandbox: false, id: row.id, status: row.scheduled_at ? 'scheduled' : 'queued', to: row.to_email, subject: row.subject, warnings };
}

/** POST /api/v1/emails. Test keys: validation and rendering only, nothing stored or counted. */
export async function sendEmail(ctx: SendContext, req: SendRequest): Promise<SendResult> {
  return retriedAloneOnDuplicate(ctx, (c) => sendEmailOnce(c, req));
}

export function unverifiedSenderError(fromEmail: string): AppError {
  return new AppError('sender_domain_unverified', `${fromEmail.slice(fromEmail.lastIndexOf('@') + 1)} is not a verified sending domain of this account`, {
    errors: [{ field: 'from.email', message: 'must be on a verified domain of the account' }],
  });
}

async function sendEmailOnce(ctx: SendContext, req: SendRequest): Promise<SendResult> {
  const ref = ctx.mode === 'live' ? ctx.idempotency?.ref : undefined;
  if (ref && ctx.idempotency?.takenOver) {
    const committed = (await findSendsByIdempotencyRef(ctx.db, ctx.accountId, [ref])).get(ref);
    if (committed) return acceptedResult(committed);
  }
  const prepared = await prepareSend(ctx, req);
  if ('sandbox' in prepared) return prepared;
  if (ref) prepared.rows[0].idempotency_ref = ref;
  try {
    if (suppressionCheckedOnStore(ctx)) {
      const suppressedRows = await ctx.storeAccepted!(prepared.rows, prepared.rows.map((r) => emailKey(r.to_email)), prepared.events);
      const suppressed = new Set(prepared.rows.filter((r) => suppressedRows.has(r.id)).map((r) => r.to_email));
      refuseIfAllSuppressed(req, envelopeRecipients(req), suppressed);
    } else {
      if (!(await insertAcceptedMessages(ctx.db, prepared.rows, prepared.events, monthlyQuotaOf(ctx), deliverableRows(prepared)))) throw quotaExceededError(ctx);
    }
  } catch (err) {
    // The domain was removed after a cached lookup found it verified: refused as unverified, not a 500.
    if (isRemovedSenderDomain(err)) throw unverifiedSenderError(req.from.email);
    throw err;
  }
  return acceptedResult(prepared.rows[0], prepared.warnings);
}

/**
 * A send under a claim whose previous owner outlived its lease can meet that owner's message
 * on the unique index messages_idempotency_ref (so it never sends twice). Then the send runs
 * once more, alone (a group commit's statement failed for all who shared it) and looking for
 * the committed message, which it answers with.
 */
export async function retriedAloneOnDuplicate<T>(ctx: SendContext, send: (ctx: SendContext) => Promise<T>): Promise<T> {
  const alone = ctx.idempotency?.takenOver ? { ...ctx, storeAccepted: undefined } : ctx;
  try {
    return await send(alone);
  } catch (err) {
    if (!isDuplicateIdempotentSend(err)) throw err;
    return send({ ...ctx, storeAccepted: undefined, idempotency: ctx.idempotency && { ...ctx.idempotency, takenOver: true } });
  }
}
