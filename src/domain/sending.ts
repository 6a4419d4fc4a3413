import type { Config } from '../config.js';
import type { Queryable } from '../db/pool.js';
import { insertAcceptedMessages, monthlyUsage, type MessageRow, type SentEventRow } from '../db/queries/messages.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { compileTemplate, renderTemplate } from '../templates/index.js';
import { findSendingDomain, type SendingDomain } from './domains.js';
import { checkAddresses, checkAttachments, checkContent, checkRawSubject, checkSchedule, type SendRequest } from './send-input.js';
import { isSuppressed } from './suppression.js';
import { renderCompiledTemplate, requireTemplateForSend } from './templates.js';
import type { TrackingLinks } from './tracking-links.js';

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
  storeAccepted?: (row: MessageRow, event: SentEventRow) => Promise<void>;
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
 * the route), addresses and headers, template and rendering; then, for live keys only, the
 * verified sender domain and the suppression list. Each step throws an AppError and stops.
 */
async function prepareSend(ctx: SendContext, req: SendRequest): Promise<{ row: MessageRow; event: SentEventRow } | SendResult> {
  const addresses = checkAddresses(req);
  checkRawSubject(req);
  const scheduledAt = checkSchedule(req, ctx.now);
  checkAttachments(req);
  if (ctx.mode === 'test') {
    const id = newId('sbx');
    const content = await renderContent(ctx, req, `${ctx.config.baseUrl}/u/sandbox`);
    checkContent(req, content);
    return { sandbox: true, id, to: req.to, subject: content.subject };
  }
  const domain = await (ctx.findDomain ?? ((a, f) => findSendingDomain(ctx.db, a, f)))(ctx.accountId, req.from.email);
  if (!domain) {
    throw new AppError('sender_domain_unverified', `${addresses.from.domain} is not a verified sending domain of this account`, {
      errors: [{ field: 'from.email', message: 'must be on a verified domain of the account' }],
    });
  }
  const id = newId('msg');
  const content = await renderContent(ctx, req, ctx.links.unsubscribe(id, domain.trackingHost));
  checkContent(req, content);
  if (await isSuppressed(ctx.db, ctx.accountId, req.to)) {
    throw new AppError('recipient_suppressed', `${req.to} is on this account's suppression list`, {
      errors: [{ field: 'to', message: 'is suppressed' }],
    });
  }
  const row: MessageRow = {
    id,
    account_id: ctx.accountId,
    domain_id: domain.id,
    status: scheduledAt ? 'scheduled' : 'queued',
    from_email: req.from.email,
    from_name: req.from.name ?? null,
    to_email: req.to,
    to_domain: addresses.to.key.split('@')[1],
    cc: req.cc ?? [],
    bcc: req.bcc ?? [],
    reply_to: req.replyTo ?? null,
    subject: content.subject,
    html: content.html,
    text: content.text,
    headers: req.headers ?? {},
    attachments: req.attachments ?? [],
    tags: req.tags ?? [],
    template_id: req.templateId ?? null,
    campaign_id: null,
    attempts: 0,
    next_attempt_at: scheduledAt ?? ctx.now,
    first_attempt_at: null,
    last_response: null,
    last_mx: null,
    locked_by: null,
    scheduled_at: scheduledAt,
    delivered_at: null,
    created_at: ctx.now,
  };
  const event: SentEventRow = {
    id: newId('evt'),
    account_id: ctx.accountId,
    message_id: id,
    type: 'sent',
    email: req.to,
    url: null,
    data: scheduledAt ? { scheduledAt: scheduledAt.toISOString() } : {},
    occurred_at: ctx.now,
  };
  return { row, event };
}

function accepted(row: MessageRow): SendResult {
  return { sandbox: false, id: row.id, status: row.status === 'scheduled' ? 'scheduled' : 'queued', to: row.to_email, subject: row.subject };
}

/** POST /api/v1/emails. Test keys: validation and rendering only, nothing stored or counted. */
export async function sendEmail(ctx: SendContext, req: SendRequest): Promise<SendResult> {
  const prepared = await prepareSend(ctx, req);
  if ('sandbox' in prepared) return prepared;
  if (ctx.monthlyQuota === null && ctx.storeAccepted) {
    await ctx.storeAccepted(prepared.row, prepared.event);
  } else {
    const quota = ctx.monthlyQuota === null ? null : { accountId: ctx.accountId, month: monthOf(ctx.now), limit: ctx.monthlyQuota };
    if (!(await insertAcceptedMessages(ctx.db, [prepared.row], [prepared.event], quota))) throw quotaExceeded(ctx);
  }
  return accepted(prepared.row);
}

export type BatchItemResult = ({ index: number } & SendResult) | { index: number; error: AppError };

/**
 * POST /api/v1/emails/batch: each item validated and answered on its own; the accepted ones
 * are stored in one statement. With a quota, items past what is left of it are refused with
 * quota_exceeded rather than failing the whole batch.
 */
export async function sendBatch(ctx: SendContext, reqs: SendRequest[]): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = [];
  const toStore: { index: number; row: MessageRow; event: SentEventRow }[] = [];
  let remaining = ctx.monthlyQuota === null ? Infinity : ctx.monthlyQuota - (await monthlyUsage(ctx.db, ctx.accountId, monthOf(ctx.now)));
  for (const [index, req] of reqs.entries()) {
    try {
      const prepared = await prepareSend(ctx, req);
      if ('sandbox' in prepared) {
        results.push({ index, ...prepared });
      } else if (remaining <= 0) {
        results.push({ index, error: quotaExceeded(ctx) });
      } else {
        remaining--;
        toStore.push({ index, ...prepared });
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push({ index, error: err });
    }
  }
  if (toStore.length > 0) {
    const quota = ctx.monthlyQuota === null ? null : { accountId: ctx.accountId, month: monthOf(ctx.now), limit: ctx.monthlyQuota };
    const stored = await insertAcceptedMessages(ctx.db, toStore.map((s) => s.row), toStore.map((s) => s.event), quota);
    for (const s of toStore) results.push(stored ? { index: s.index, ...accepted(s.row) } : { index: s.index, error: quotaExceeded(ctx) });
  }
  return results.sort((a, b) => a.index - b.index);
}
