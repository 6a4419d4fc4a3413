/**
 * The batch form of a send (POST /api/v1/emails/batch): every item goes through the single
 * send's checks (./sending.ts) and is answered on its own; the accepted items are stored by
 * one statement.
 */
import { findSendsByIdempotencyRef, insertAcceptedMessages, isRemovedSenderDomain, monthlyUsage, type MessageRow } from '../../db/queries/messages.js';
import { AppError } from '../../errors.js';
import { findSendingDomain } from '../domains/domains.js';
import type { SendRequest } from './send-input.js';
import {
  acceptedResult, deliverableRows, monthlyQuotaOf, monthOf, prepareSend, quotaExceededError, retriedAloneOnDuplicate, unverifiedSenderError,
  type PreparedSend, type SendContext, type SendResult,
} from './sending.js';

export type BatchItemResult = ({ index: number } & SendResult) | { index: number; error: AppError };

/**
 * POST /api/v1/emails/batch: each item validated and answered on its own; the accepted ones
 * are stored in one statement. With a quota, items past what is left of it are refused with
 * quota_exceeded rather than failing the whole batch.
 */
export async function sendBatch(ctx: SendContext, reqs: SendRequest[]): Promise<BatchItemResult[]> {
  // The batch's items are stored by one statement of their own, after reading the suppression list.
  return retriedAloneOnDuplicate({ ...ctx, storeAccepted: undefined }, (c) => sendBatchOnce(c, reqs));
}

async function sendBatchOnce(ctx: SendContext, reqs: SendRequest[]): Promise<BatchItemResult[]> {
  const results: BatchItemResult[] = [];
  // Each item's send carries the claim's ref and its index (a space: never in a key's ref).
  const ref = ctx.mode === 'live' ? ctx.idempotency?.ref : undefined;
  const itemRef = (index: number) => `${ref} ${index}`;
  const committed = ref && ctx.idempotency?.takenOver
    ? await findSendsByIdempotencyRef(ctx.db, ctx.accountId, reqs.map((_, index) => itemRef(index)))
    : new Map<string, Pick<MessageRow, 'id' | 'to_email' | 'subject' | 'scheduled_at'>>();
  const toStore: ({ index: number } & PreparedSend)[] = [];
  let remaining = ctx.monthlyQuota === null ? Infinity : ctx.monthlyQuota - (await monthlyUsage(ctx.db, ctx.accountId, monthOf(ctx.now)));
  for (const [index, req] of reqs.entries()) {
    const done = ref ? committed.get(itemRef(index)) : undefined;
    if (done) {
      results.push({ index, ...acceptedResult(done) });
      continue;
    }
    try {
      const prepared = await prepareSend(ctx, req);
      if (ref && !('sandbox' in prepared)) prepared.rows[0].idempotency_ref = itemRef(index);
      if ('sandbox' in prepared) {
        results.push({ index, ...prepared });
      } else if (remaining < deliverableRows(prepared)) {
        results.push({ index, error: quotaExceededError(ctx) });
      } else {
        remaining -= deliverableRows(prepared);
        toStore.push({ index, ...prepared });
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push({ index, error: err });
    }
  }
  if (toStore.length > 0) results.push(...(await storeBatchItems(ctx, toStore)));
  return results.sort((a, b) => a.index - b.index);
}

async function storeBatchItems(ctx: SendContext, toStore: ({ index: number } & PreparedSend)[]): Promise<BatchItemResult[]> {
  let stored: boolean;
  try {
    stored = await insertAcceptedMessages(ctx.db, toStore.flatMap((s) => s.rows), toStore.flatMap((s) => s.events), monthlyQuotaOf(ctx), toStore.reduce((n, s) => n + deliverableRows(s), 0));
  } catch (err) {
    if (!isRemovedSenderDomain(err)) throw err;
    // A domain was removed after a cached lookup found it verified: its items are refused as
    // unverified (asked again without the cache), the others stored, as single sends would be.
    const current = new Map<string, string | undefined>();
    for (const { from_email: from } of toStore.map((s) => s.rows[0])) {
      if (!current.has(from)) current.set(from, (await findSendingDomain(ctx.db, ctx.accountId, from))?.id);
    }
    const kept: typeof toStore = [];
    const refused: BatchItemResult[] = [];
    for (const s of toStore) {
      if (current.get(s.rows[0].from_email) === s.rows[0].domain_id) kept.push(s);
      else refused.push({ index: s.index, error: unverifiedSenderError(s.rows[0].from_email) });
    }
    if (refused.length === 0) throw err;
    return [...refused, ...(kept.length > 0 ? await storeBatchItems(ctx, kept) : [])];
  }
  return toStore.map((s) => (stored ? { index: s.index, ...acceptedResult(s.rows[0], s.warnings) } : { index: s.index, error: quotaExceededError(ctx) }));
}
