import { withTransaction, type Pool, type Queryable } from '../db/pool.js';
import {
  insertBounceReports, insertInboundMessage, lockMessage, markMessageBounced, messageHasEvent, type BounceReportInsert,
} from '../db/queries/inbound.js';
import type { MessageRow } from '../db/queries/messages.js';
import { newId } from '../ids.js';
import { parseArf } from '../mail/arf.js';
import { readOriginalHeaders, parseDsn, type Dsn, type DsnRecipient } from '../mail/dsn.js';
import { decodeVerp } from '../mail/verp.js';
import { suppressAddress } from './address-status.js';
import { processArf, type ArfOutcome } from './complaints.js';
import { recordEvents, type NewEvent } from './events.js';

/**
 * Mail coming back to the addresses we send from (DESIGN.md §10, docs/complaints-and-bounces.md):
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

export type InboundKind = 'dsn' | 'unsubscribe' | 'other';

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
  const dsn = await parseDsn(mail.raw);
  const reportFailure = !dsn.ok && dsn.reason !== 'not_multipart_report' && dsn.reason !== 'unparseable' ? `${dsn.reason}: ${dsn.detail}` : null;
  let kind: InboundKind = dsn.ok ? 'dsn' : 'other';
  if (!dsn.ok) {
    // Some feedback loops send complaints to the return path rather than to fbl@.
    if (dsn.reason === 'no_delivery_status' && (await parseArf(mail.raw)).ok) {
      return { to: mail.to, kind: 'complaint', complaint: await processArf(db, mail.raw, 'smtp', now, keys) };
    }
    const subject = (await readOriginalHeaders(mail.raw)).subject;
    if (subject !== null && UNSUBSCRIBE_SUBJECT.test(subject)) kind = 'unsubscribe';
  }
  return withTransaction(db, async (tx) => {
    const message = await lockMessage(tx, mail.messageId);
    const inboundId = newId('rpt');
    await insertInboundMessage(tx, {
      id: inboundId, receivedAt: now, envelopeFrom: mail.envelopeFrom ?? '', envelopeTo: mail.to, raw: mail.raw, kind,
      messageId: mail.messageId, accountId: message?.account_id ?? null, parseError: reportFailure,
    });
    let eventIds: string[] = [];
    if (dsn.ok) eventIds = await applyDsn(tx, inboundId, message, mail.messageId, dsn.dsn, now);
    else if (kind === 'unsubscribe' && message) eventIds = await applyMailtoUnsubscribe(tx, message, mail.envelopeFrom ?? '', now);
    return { to: mail.to, kind, messageId: mail.messageId, eventIds };
  });
}

/**
 * One DSN: each recipient block is stored; a block acts only when it names the message's
 * recipient (Final- or Original-Recipient). A block naming someone else comes from
 * forwarding or alias expansion at the receiving side: one dead member of an alias must not
 * suppress the alias, so such blocks are stored and do nothing.
 *
 * hard → hard_bounce event + suppression (hard_bounce) + status bounced, unless the message
 * already has a hard_bounce for that address (a 5xx at delivery time, or a repeated DSN);
 * soft → `deferred` for Action: delayed (every such notice: they repeat as the remote queue
 * keeps retrying), `soft_bounce` for a failure with a 4.x.x status (once); delivered and
 * other → stored only.
 */
async function applyDsn(tx: Queryable, inboundId: string, message: MessageRow | null, messageId: string, dsn: Dsn, now: Date): Promise<string[]> {
  const rows: BounceReportInsert[] = [];
  const eventIds: string[] = [];
  for (const r of dsn.recipients) {
    const to = message?.to_email ?? null;
    const ours = to !== null && [r.finalRecipient, r.originalRecipient].some((a) => a?.toLowerCase() === to.toLowerCase());
    const eventId = ours && message ? await applyDsnRecipient(tx, message, r, dsn, now) : null;
    if (eventId) eventIds.push(eventId);
    rows.push({
      finalRecipient: r.finalRecipient, originalRecipient: r.originalRecipient, action: r.action, status: r.status,
      diagnosticCode: r.diagnosticCode, remoteMta: r.remoteMta, classification: r.classification,
      email: ours ? to : null, eventId,
    });
  }
  await insertBounceReports(tx, inboundId, { messageId, accountId: message?.account_id ?? null }, rows);
  return eventIds;
}

async function applyDsnRecipient(tx: Queryable, message: MessageRow, r: DsnRecipient, dsn: Dsn, now: Date): Promise<string | null> {
  if (r.classification !== 'hard' && r.classification !== 'soft') return null;
  const email = message.to_email;
  const type: NewEvent['type'] = r.classification === 'hard' ? 'hard_bounce' : r.action === 'delayed' ? 'deferred' : 'soft_bounce';
  if (type !== 'deferred' && (await messageHasEvent(tx, message.id, type, email))) return null;
  const response = r.diagnosticCode ?? (r.status ? `status ${r.status}` : null);
  if (type === 'hard_bounce') {
    await suppressAddress(tx, message.account_id, email, 'hard_bounce', now, response);
    await markMessageBounced(tx, message.id, response);
  }
  const [eventId] = await recordEvents(tx, [{
    accountId: message.account_id,
    messageId: message.id,
    type,
    email,
    data: {
      response, mx: r.remoteMta, enhancedCode: r.status, action: r.action, reportingMta: dsn.reportingMta, source: 'dsn',
    },
    occurredAt: now,
  }]);
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
