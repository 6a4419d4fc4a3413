import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { insertFblReport, lockMessage, messageHasEvent } from '../../db/queries/inbound.js';
import { getMessageById, latestMessageTo, type MessageRow } from '../../db/queries/messages.js';
import { newId } from '../../ids.js';
import { parseArf, type ArfFailureReason, type ArfReport } from '../../mail/arf.js';
import { decodeVerp } from '../../mail/verp.js';
import { suppressAddress } from '../audience/address-status.js';
import { recordEvents } from '../events.js';

/**
 * Complaint intake (docs/architecture.md#complaints-and-bounces-coming-back, docs/complaints-and-bounces.md): an ARF report (RFC 5965),
 * from POST /api/fbl/inbound or mail to fbl@, is matched to the message complained about and
 * turns into a suppression (reason complaint) and a `spam` event, in one transaction with the
 * stored report. Every report is stored, matched or not, parseable or not.
 */

export type ReportSource = 'http' | 'smtp';
export type MatchedBy = 'message_id' | 'return_path' | 'address';

/**
 * Feedback types that are a recipient's complaint. `not-spam` (the user rescued the message)
 * and `auth-failure` (RFC 6591 authentication failure reports) are matched and stored but
 * change nothing.
 */
export const COMPLAINT_FEEDBACK_TYPES: readonly string[] = ['abuse', 'fraud', 'virus', 'other'];

export type ArfOutcome =
  | {
      ok: true;
      reportId: string;
      matched: true;
      matchedBy: MatchedBy;
      messageId: string;
      accountId: string;
      /** The complaining address: the reported one when it is the message's, else the message's recipient. */
      email: string;
      feedbackType: string;
      /** The spam event recorded; null for a non-complaint type or a repeat complaint about the message. */
      spamEventId: string | null;
    }
  | { ok: true; reportId: string; matched: false; messageId: null; email: string | null; feedbackType: string; spamEventId: null }
  | { ok: false; reportId: string; reason: ArfFailureReason | 'empty'; detail: string };

export interface ArfOptions {
  /** deriveKey(config.secret, 'verp'): lets a signed VERP Original-Mail-From identify the message. */
  verpKey?: Buffer;
  /**
   * Whether the reported address alone may identify a message. Default: only for 'http'
   * (the caller proved the FBL key). Mail to fbl@ comes from anyone on the internet, and an
   * address is no secret: matching by it would let anyone suppress any customer's recipient
   * with a forged report. A Message-ID (known to the recipient only) or a signed VERP return
   * path is evidence a forger does not have.
   */
  matchByAddress?: boolean;
}

/** `<msg_…@domain>` → our message id (lower case, as verp.ts), else null. */
export function ourMessageId(headerValue: string | null): string | null {
  const m = /^<?(msg_[0-9a-f]{32})@[^\s<>@]+>?$/i.exec(headerValue?.trim() ?? '');
  return m ? m[1].toLowerCase() : null;
}

const sameAddress = (a: string | null | undefined, b: string | null | undefined) => !!a && !!b && a.toLowerCase() === b.toLowerCase();

interface Match {
  message: MessageRow;
  by: MatchedBy;
}

/** docs/architecture.md#complaints-and-bounces-coming-back: the original's Message-ID, else (our addition) a signed VERP return path, else the address. */
async function findMessage(db: Queryable, report: ArfReport, opts: Required<ArfOptions>): Promise<Match | null> {
  const byId = ourMessageId(report.originalMessageId);
  const message = byId ? await getMessageById(db, byId) : null;
  if (message) return { message, by: 'message_id' };
  if (opts.verpKey.length > 0 && report.originalMailFrom) {
    const verp = decodeVerp(report.originalMailFrom, opts.verpKey);
    const viaVerp = verp.ok ? await getMessageById(db, verp.messageId) : null;
    if (viaVerp) return { message: viaVerp, by: 'return_path' };
  }
  if (opts.matchByAddress && report.recipient) {
    const latest = await latestMessageTo(db, report.recipient);
    if (latest) return { message: latest, by: 'address' };
  }
  return null;
}

export async function processArf(db: Pool, raw: Buffer, source: ReportSource, now: Date, options: ArfOptions = {}): Promise<ArfOutcome> {
  const opts: Required<ArfOptions> = { verpKey: options.verpKey ?? Buffer.alloc(0), matchByAddress: options.matchByAddress ?? source === 'http' };
  const reportId = newId('rpt');
  const stored = { id: reportId, receivedAt: now, source, raw };
  const parsed = raw.length === 0 ? ({ ok: false, reason: 'empty', detail: 'the report is empty' } as const) : await parseArf(raw);
  if (!parsed.ok) {
    await insertFblReport(db, {
      ...stored, feedbackType: null, userAgent: null, originalMessageId: null, matchedBy: null, messageId: null, accountId: null, email: null,
      eventId: null, parseError: `${parsed.reason}: ${parsed.detail}`,
    });
    return { ok: false, reportId, reason: parsed.reason, detail: parsed.detail };
  }
  const { report } = parsed;
  const base = { ...stored, feedbackType: report.feedbackType, userAgent: report.userAgent, originalMessageId: report.originalMessageId, parseError: null };
  const match = await findMessage(db, report, opts);
  if (!match) {
    await insertFblReport(db, { ...base, matchedBy: null, messageId: null, accountId: null, email: report.recipient, eventId: null });
    return { ok: true, reportId, matched: false, messageId: null, email: report.recipient, feedbackType: report.feedbackType, spamEventId: null };
  }

  const { message } = match;
  const email = [message.to_email, ...message.cc, ...message.bcc].find((a) => sameAddress(a, report.recipient)) ?? message.to_email;
  const spamEventId = await withTransaction(db, async (tx) => {
    // The lock serialises copies of one report; see lockMessage.
    await lockMessage(tx, message.id);
    const complaint = COMPLAINT_FEEDBACK_TYPES.includes(report.feedbackType);
    let eventId: string | null = null;
    if (complaint && !(await messageHasEvent(tx, message.id, 'spam'))) {
      await suppressAddress(tx, message.account_id, email, 'complaint', now, `${report.feedbackType} report${report.userAgent ? ` from ${report.userAgent}` : ''}`);
      [eventId] = await recordEvents(tx, [{
        accountId: message.account_id,
        messageId: message.id,
        type: 'spam',
        email,
        data: { feedbackType: report.feedbackType, userAgent: report.userAgent, source },
        occurredAt: now,
      }]);
    }
    await insertFblReport(tx, { ...base, matchedBy: match.by, messageId: message.id, accountId: message.account_id, email, eventId });
    return eventId;
  });
  return {
    ok: true, reportId, matched: true, matchedBy: match.by, messageId: message.id, accountId: message.account_id, email,
    feedbackType: report.feedbackType, spamEventId,
  };
}
