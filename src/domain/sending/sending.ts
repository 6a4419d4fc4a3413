import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import { insertAcceptedMessages, monthlyUsage, type MessageRow, type SentEventRow } from '../../db/queries/messages.js';
import { AppError } from '../../errors.js';
import { newId } from '../../ids.js';
import { compileTemplate, renderTemplate } from '../../templates/index.js';
import { findSendingDomain, type SendingDomain } from '../domains/domains.js';
import { checkAddresses, checkAttachments, checkContent, checkRawSubject, checkSchedule, type SendRequest } from './send-input.js';
import { emailKey } from '../email-address.js';
import { isSuppressed, suppressedAmong } from '../suppression.js';
import { renderCompiledTemplate, requireTemplateForSend } from '../stored-templates.js';
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
   * How to store one accepted message of an account without a quota; the API passes a
   * group commit that writes concurrent accepts in one statement. Default: write it alone.
   */
  storeAccepted?: (rows: MessageRow[], events: SentEventRow[]) => Promise<void>;
  /** Which of `emails` are suppressed; the API passes lookups batched across its concurrent requests. */
  suppressedAmong?: (accountId: string, emails: readonly string[]) => Promise<Set<string>>;
}

/** One accepted send: a row per envelope recipient (the `to` row first) and their `sent` events. */
interface PreparedSend {
  rows: MessageRow[];
  events: SentEventRow[];
}

/** The envelope recipients of a send, each address once (the first way it was named wins). */
export function envelopeRecipients(req: Pick<SendRequest, 'to' | 'cc' | 'bcc'>): { email: string; type: 'to' | 'cc' | 'bcc' }[] {
  const seen = new Set<string>();
  const out: { email: string; type: 'to' | 'cc' | 'bcc' }[] = [];
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

export type SendResult =
  | { sandbox: true; id: string; to: string; subject: string }
  | { sandbox: false; id: string; status: 'queued' | 'scheduled'; to: string; subject: string };

interface Rendered {
  subject: string;
  html: string | null;
  text: string | null;
}

/**
 * Renders subject, html and text: the template's parts, overridden by any the request
 * gives, all rendered with the request's variables plus `unsubscribe_url`.
 */
async function renderContent(ctx: SendContext, req: SendRequest, unsubscribeUrl: string): Promise<Rendered> {
  const variables = { ...req.variables, unsubscribe_url: unsubscribeUrl };
  const template = req.templateId ? await requireTemplateForSend(ctx.db, ctx.accountId, req.templateId) : null;
  const fromTemplate = template ? renderCompiledTemplate(template, variables) : { subject: null, html: null, text: null };
  const inline = (source: string | undefined, context: 'subject' | 'html' | 'text') =>
    source === undefined ? null : renderTemplate(compileTemplate(source), variables, context);
  return {
    subject: inline(req.subject, 'subject') ?? fromTemplate.subject ?? '',
    html: inline(req.html, 'html') ?? fromTemplate.html,
    text: inline(req.text, 'text') ?? fromTemplate.text,
  };
}

/** First day of the next month, UTC: when a monthly quota resets. */
export function quotaResetsAt(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

function quotaExceeded(ctx: SendContext): AppError {
  const retryAfter = Math.ceil((quotaResetsAt(ctx.now).getTime() - ctx.now.getTime()) / 1000);
  return new AppError('quota_exceeded', `Monthly quota of ${ctx.monthlyQuota} messages used up; it resets on the 1st (UTC)`, { retryAfter });
}

export function monthOf(now: Date): string {
  return now.toISOString().slice(0, 7) + '-01';
}

/**
 * Validates one send request and prepares its row, in the order of DESIGN.md §6: schema (by
 * the route), addresses and headers, the verified sender domain, template and rendering, the
 * suppression list. Each step throws an AppError and stops; test keys run them all and get a
 * sandbox result instead of a row.
 */
async function prepareSend(ctx: SendContext, req: SendRequest): Promise<PreparedSend | SendResult> {
  checkAddresses(req);
  checkRawSubject(req);
  const scheduledAt = checkSchedule(req, ctx.now);
  checkAttachments(req);
  // Test keys go through every check a live key does (issue 11, item 9: same validation, same
  // errors) and stop just before anything is stored.
  const domain = await (ctx.findDomain ?? ((a, f) => findSendingDomain(ctx.db, a, f)))(ctx.accountId, req.from.email);
  if (!domain) {
    throw new AppError('sender_domain_unverified', `${req.from.email.slice(req.from.email.lastIndexOf('@') + 1)} is not a verified sending domain of this account`, {
      errors: [{ field: 'from.email', message: 'must be on a verified domain of the account' }],
    });
  }
  const id = newId(ctx.mode === 'test' ? 'sbx' : 'msg');
  const content = await renderContent(ctx, req, ctx.mode === 'test' ? `${ctx.config.baseUrl}/u/sandbox` : ctx.links.unsubscribe(id, domain.trackingHost));
  checkContent(req, content);
  // Suppression is checked per recipient: a suppressed cc/bcc (or `to`) gets a row with status
  // 'suppressed' and is not delivered; only a send whose every recipient is suppressed is
  // refused (as Postmark does with inactive recipients).
  const recipients = envelopeRecipients(req);
  const suppressed = ctx.suppressedAmong
    ? await ctx.suppressedAmong(ctx.accountId, recipients.map((r) => r.email))
    : recipients.length === 1
      ? ((await isSuppressed(ctx.db, ctx.accountId, req.to)) ? new Set([req.to]) : new Set<string>())
      : new Set((await suppressedAmong(ctx.db, ctx.accountId, recipients.map((r) => r.email))).keys());
  if (recipients.every((r) => suppressed.has(r.email))) {
    throw new AppError('recipient_suppressed', `${recipients.map((r) => r.email).join(', ')} ${recipients.length === 1 ? 'is' : 'are all'} on this account's suppression list`, {
      errors: recipients.map((r) => ({ field: fieldOf(req, r), message: 'is suppressed' })),
    });
  }
  if (ctx.mode === 'test') return { sandbox: true, id, to: req.to, subject: content.subject };
  const rows: MessageRow[] = [];
  const events: SentEventRow[] = [];
  const group = recipients.length > 1;
  for (const r of recipients) {
    const rowId = r.type === 'to' ? id : newId('msg');
    const isSuppressedHere = suppressed.has(r.email);
    const status = isSuppressedHere ? 'suppressed' : scheduledAt ? 'scheduled' : 'queued';
    const copy = r.type !== 'to';
    rows.push({
      id: rowId,
      account_id: ctx.accountId,
      domain_id: domain.id,
      status,
      from_email: req.from.email,
      from_name: req.from.name ?? null,
      to_email: r.email,
      to_domain: (emailKey(r.email) ?? r.email).split('@')[1],
      cc: req.cc ?? [],
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
      last_response: isSuppressedHere ? 'not sent: the address is on the suppression list' : null,
      last_mx: null,
      locked_by: null,
      scheduled_at: scheduledAt,
      delivered_at: null,
      created_at: ctx.now,
      group_id: group ? id : null,
      recipient_type: r.type,
      header_to: copy ? req.to : null,
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
  return { rows, events };
}

function fieldOf(req: SendRequest, r: { email: string; type: 'to' | 'cc' | 'bcc' }): string {
  if (r.type === 'to') return 'to';
  return `${r.type}[${(r.type === 'cc' ? req.cc : req.bcc)!.indexOf(r.email)}]`;
}

/** Rows that count against the monthly quota: every recipient the send will be delivered to. */
function deliverable(p: PreparedSend): number {
  return p.rows.filter((r) => r.status !== 'suppressed').length;
}

function accepted(row: MessageRow): SendResult {
  return { sandbox: false, id: row.id, status: row.scheduled_at ? 'scheduled' : 'queued', to: row.to_email, subject: row.subject };
}

/** POST /api/v1/emails. Test keys: validation and rendering only, nothing stored or counted. */
export async function sendEmail(ctx: SendContext, req: SendRequest): Promise<SendResult> {
  const prepared = await prepareSend(ctx, req);
  if ('sandbox' in prepared) return prepared;
  if (ctx.monthlyQuota === null && ctx.storeAccepted) {
    await ctx.storeAccepted(prepared.rows, prepared.events);
  } else {
    const quota = ctx.monthlyQuota === null ? null : { accountId: ctx.accountId, month: monthOf(ctx.now), limit: ctx.monthlyQuota };
    if (!(await insertAcceptedMessages(ctx.db, prepared.rows, prepared.events, quota, deliverable(prepared)))) throw quotaExceeded(ctx);
  }
  return accepted(prepared.rows[0]);
}

export type BatchItemResult = ({ index: number } & SendResult) | { index: number; error: AppError };

/**
 * POST /api/v1/emails/batch: each item validated and answered on its own; the accepted ones
 * are stored in one statement. With a quota, items past what is left of it are refused with
 * quota_exceeded rather than failing the whole batch.
 */
export async function sendBatch(ctx: SendContext, reqs: SendRequest[]): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = [];
  const toStore: ({ index: number } & PreparedSend)[] = [];
  let remaining = ctx.monthlyQuota === null ? Infinity : ctx.monthlyQuota - (await monthlyUsage(ctx.db, ctx.accountId, monthOf(ctx.now)));
  for (const [index, req] of reqs.entries()) {
    try {
      const prepared = await prepareSend(ctx, req);
      if ('sandbox' in prepared) {
        results.push({ index, ...prepared });
      } else if (remaining < deliverable(prepared)) {
        results.push({ index, error: quotaExceeded(ctx) });
      } else {
        remaining -= deliverable(prepared);
        toStore.push({ index, ...prepared });
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push({ index, error: err });
    }
  }
  if (toStore.length > 0) {
    const quota = ctx.monthlyQuota === null ? null : { accountId: ctx.accountId, month: monthOf(ctx.now), limit: ctx.monthlyQuota };
    const stored = await insertAcceptedMessages(ctx.db, toStore.flatMap((s) => s.rows), toStore.flatMap((s) => s.events), quota, toStore.reduce((n, s) => n + deliverable(s), 0));
    for (const s of toStore) results.push(stored ? { index: s.index, ...accepted(s.rows[0]) } : { index: s.index, error: quotaExceeded(ctx) });
  }
  return results.sort((a, b) => a.index - b.index);
}
