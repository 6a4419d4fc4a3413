import { finishPage, keyset, type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import { getCaptured, listCaptured, type CapturedRow } from '../../db/queries/captured.js';
import { getMessage, type MessageRow } from '../../db/queries/messages.js';

/**
 * Captured mail: POSTLINE_DELIVERY=capture keeps every outgoing message locally instead of
 * sending it (the safe development mode); the API lists them and answers their bytes.
 */

export interface CapturedMessage {
  id: string;
  envelopeFrom: string;
  envelopeTo: string;
  subject: string;
  capturedAt: string;
}

export async function listCapturedMessages(db: Queryable, accountId: string, page: Page): Promise<{ data: CapturedMessage[]; nextCursor: string | null }> {
  const rows = await listCaptured(db, accountId, { ...keyset(page, 'id', 2), limit: page.limit });
  const { data, nextCursor } = finishPage(rows, page, (r) => r.id);
  return {
    data: data.map((r) => ({ id: r.id, envelopeFrom: r.envelope_from, envelopeTo: r.envelope_to, subject: r.subject, capturedAt: r.captured_at.toISOString() })),
    nextCursor,
  };
}

/** The bytes kept for a captured message of the account, or null. */
export async function capturedSource(db: Queryable, accountId: string, id: string): Promise<Buffer | null> {
  return (await getCaptured(db, accountId, id))?.raw ?? null;
}

/** A message of the account and its captured copy, if any (GET /emails/:id/raw). */
export async function messageWithCapture(db: Queryable, accountId: string, id: string): Promise<{ message: MessageRow; captured: CapturedRow | null } | null> {
  const message = await getMessage(db, accountId, id);
  if (!message) return null;
  return { message, captured: await getCaptured(db, accountId, id) };
}
