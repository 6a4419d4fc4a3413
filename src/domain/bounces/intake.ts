import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import {
  insertBounceReports, insertInboundMessage, lockMessage, markMessageBounced, messageHasEvent, type BounceReportInsert,
} from '../../db/queries/inbound.js';
import type { MessageRow } from '../../db/queries/messages.js';
import { newId } from '../../ids.js';
import { readReturnedMail, type BouncedRecipient, type ReturnedMail } from '../../mail/bounces/read.js';
import { decodeVerp } from '../../mail/verp.js';
import { suppressAddress } from '../audience/address-status.js';
import { processArf, type ArfOutcome } from './complaints.js';
import { bounceData } from './bounce-data.js';
import { recordEvents, type NewEvent } from '../events.js';
import { countsTowardPersistence, suppressIfPersistentlySoft } from './persistent.js';

/**
 * Mail coming back to the addresses we send from (docs/architecture.md#complaints-and-bounces-coming-back, docs/complaints-and-bounces.md):
 * VERP return paths receive DSNs (asynchronous bounces) and the List-Unsubscribe mailto;
 * fbl@ receives ARF complaints. The VERP address, signed, says which message; the DSN only
 * says what happened to it.
 */

export interface InboundMail {
  /** RCPT TO addresses the listener accepted. */
  envelopeTo: string[];
  /** MAIL FROM; '' for the null sender of DSNs. */
  envelopeFrom?: string;
  raw: Buffer;
}

export type InboundKind = 'bounce' | 'delivered' | 'auto_reply' | 'unsubscribe' | 'other';

export type InboundOutcome =
  | { to: string; kind: 'complaint'; complaint: ArfOutcome }
  | { to: string; kind: InboundKind; messageId: string | null; eventIds: string[] };

/** What the listener accepts at RCPT time: a VERP address with a valid tag, or fbl@ any domain. */
export function inboundRecipientKind(address: string, verpKey: Buffer): 'verp' | 'fbl' | null {
  if (/^fbl@[^@\s]+$/i.test(address.trim())) return 'fbl';
  return decodeVerp(address, verpKey).ok ? 'verp' : null;
}

/** RFC 8058's mailto form, as our List-Unsubscribe header writes it: `?subject=unsubscribe`. */
const UNSUBSCRIBE_SUBJECT = /^\s*unsubscribe\s*$/i;

/**
 * One received mail, every accepted recipient handled: fbl@ (once, however many) → the
 * complaint path; each distinct VERP message → DSN, mailto unsubscribe, an ARF sent to the
 * return path, or stored as other. Each message's effects commit in one transaction with the
 * stored mail; a throw means nothing of that message was kept (the listener answers 451 and
 * the sender retries).
 */
export async function processInboundMail(db: Pool, mail: InboundMail, now: Date, keys: { verpKey: Buffer }): Promise<InboundOutcome[]> {
  const out: InboundOutcome[] = [];
  const seen = new Set<string>();
  for (const to of mail.envelopeTo) {
    const kind = inboundRecipientKind(to, keys.verpKey);
    if (kind === 'fbl') {
      if (seen.has('fbl')) continue;
      seen.add('fbl');
      out.push({ to, kind: 'complaint', complaint: await processArf(db, mail.raw, 'smtp', now, keys) });
      continue;
    }
    const verp = decodeVerp(to, keys.verpKey);
    if (!verp.ok || seen.has(verp.messageId)) continue;
    seen.add(verp.messageId);
    out.push(await processVerpMail(db, { ...mail, to, messageId: verp.messageId }, now, keys));
  }
  return out;
}

async function processVerpMail(
  db: Pool,
  mail: { to: string; envelopeFrom?: string; raw: Buffer; messageId: string },
  now: Date,
  keys: { verpKey: Buffer },
): Promise<InboundOutcome> {
  const read = await readReturnedMail(mail.raw);
  // Some feedback loops send complaints to the return path rather than to fbl@.
  if (read.kind === 'complaint') return { to: mail.to, kind: 'complaint', complaint: await processArf(db, mail.raw, 'smtp', now, keys) };
  const kind: InboundKind = UNSUBSCRIBE_SUBJECT.test(read.subject) && read.kind !== 'bounce' ? 'unsubscribe'
    : read.kind === 'unknown' ? 'other' : read.kind;
  const parseError = kind === 'bounce' && read.recipients.length === 0 ? 'a bounce naming no recipient we could read' : null;
  return withTransaction(db, async (tx) => {
    const message = await lockMessage(tx, mail.messageId);
    const inboundId = newId('rpt');
    await insertInboundMessage(tx, {
      id: inboundId, receivedAt: now, envelopeFrom: mail.envelopeFrom ?? '', envelopeTo: mail.to, raw: mail.raw, kind, format: read.format,
      messageId: mail.messageId, accountId: message?.account_id ?? null, parseError,
    });
    let eventIds: string[] = [];
    if (read.recipients.length > 0) eventIds = await applyReport(tx, inboundId, message, mail.messageId, read, now);
    else if (kind === 'unsubscribe' && message) eventIds = await applyMailtoUnsubscribe(tx, message, mail.envelopeFrom ?? '', now);
    return { to: mail.to, kind, messageId: mail.messageId, eventIds };
  });
}

/**
 * One bounce (any format): each recipient it names is stored; a recipient acts only when it
 * is the message's recipient (by its final or original address). A recipient naming someone
 * else comes from forwarding or alias expansion at the receiving side: one dead member of an
 * alias must not suppress the alias, so it is stored and does nothing.
 *
 * Dead (docs/bounces.md) → hard_bounce event + suppression (hard_bounce, with the reason) +
 * status bounced, unless the message already has a hard_bounce for that address (a 5xx at
 * delivery time, or a repeated bounce). Any other failure → soft_bounce, once per message,
 * status bounced, never a suppression (but see the 30-day rule, ./persistent.ts). Delayed →
 * a `deferred` event for every notice (they repeat as the remote queue keeps retrying).
 * Delivered notices are stored only.
 */
async function applyReport(tx: Queryable, inboundId: string, message: MessageRow | null, messageId: string, read: ReturnedMail, now: Date): Promise<string[]> {
  const rows: BounceReportInsert[] = [];
  const eventIds: string[] = [];
  for (const r of read.recipients) {
    const to = message?.to_email ?? null;
    const ours = to !== null && [r.email, r.originalRecipient].some((a) => a?.toLowerCase() === to.toLowerCase());
    const eventId = ours && message ? await applyRecipient(tx, message, r, read, now) : null;
    if (eventId) eventIds.push(eventId);
    rows.push({ recipient: r, classification: classificationOf(r), email: ours ? to : null, eventId });
  }
  await insertBounceReports(tx, inboundId, { messageId, accountId: message?.account_id ?? null }, rows);
  return eventIds;
}

const DELIVERED = new Set(['delivered', 'relayed', 'expanded']);

/** The stored row's summary: hard = dead, soft = any other failure or delay. */
function classificationOf(r: BouncedRecipient): BounceReportInsert['classification'] {
  if (r.action !== null && DELIVERED.has(r.action)) return 'delivered';
  if (r.dead) return 'hard';
  return r.action === 'failed' || r.action === 'delayed' ? 'soft' : 'other';
}

async function applyRecipient(tx: Queryable, message: MessageRow, r: BouncedRecipient, read: ReturnedMail, now: Date): Promise<string | null> {
  const cls = classificationOf(r);
  if (cls !== 'hard' && cls !== 'soft') return null;
  const email = message.to_email;
  const type: NewEvent['type'] = cls === 'hard' ? 'hard_bounce' : r.action === 'delayed' ? 'deferred' : 'soft_bounce';
  if (type === 'hard_bounce' && (await messageHasEvent(tx, message.id, 'hard_bounce', email))) return null;
  if (type === 'soft_bounce' && ((await messageHasEvent(tx, message.id, 'soft_bounce', email)) || (await messageHasEvent(tx, message.id, 'hard_bounce', email)))) return null;
  const response = r.diagnostic ?? (r.status ? `status ${r.status}` : null);
  if (type === 'hard_bounce') await suppressAddress(tx, message.account_id, email, 'hard_bounce', now, response, r.reason);
  if (type !== 'deferred') await markMessageBounced(tx, message.id, response);
  const verdict = { reason: r.reason, side: r.side, permanent: r.permanent, dead: r.dead, ourFault: r.ourFault, status: r.status, reply: r.reply };
  const [eventId] = await recordEvents(tx, [{
    accountId: message.account_id,
    messageId: message.id,
    type,
    email,
    data: {
      response, mx: r.remoteMta, enhancedCode: r.status, action: r.action, reportingMta: read.reportingMta, source: 'bounce_mail', format: read.format, ourFault: r.ourFault,
      ...(type === 'deferred' ? {} : { bounce: bounceData(verdict, r.diagnostic, r.remoteMta ?? read.reportingMta) }),
    },
    occurredAt: now,
  }]);
  if (type === 'soft_bounce' && countsTowardPersistence(verdict)) await suppressIfPersistentlySoft(tx, message.account_id, email, now);
  return eventId;
}

/** The List-Unsubscribe mailto: the recipient of the message the VERP address names leaves, once. */
async function applyMailtoUnsubscribe(tx: Queryable, message: MessageRow, envelopeFrom: string, now: Date): Promise<string[]> {
  if (await messageHasEvent(tx, message.id, 'unsubscribe')) return [];
  await suppressAddress(tx, message.account_id, message.to_email, 'unsubscribe', now, 'List-Unsubscribe mailto');
  return recordEvents(tx, [{
    accountId: message.account_id,
    messageId: message.id,
    type: 'unsubscribe',
    email: message.to_email,
    data: { method: 'mailto', from: envelopeFrom || null },
    occurredAt: now,
  }]);
}
