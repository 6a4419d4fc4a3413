import type { Queryable } from '../pool.js';

export interface CapturedRow {
  id: string;
  account_id: string;
  envelope_from: string;
  envelope_to: string;
  subject: string;
  raw: Buffer;
  captured_at: Date;
}

// Idempotent: a message re-delivered after a lease expiry is captured once.
export async function captureMessage(
  db: Queryable,
  m: { id: string; accountId: string; envelopeFrom: string; envelopeTo: string; subject: string; raw: Buffer; at: Date },
): Promise<void> {
  await db.query(
    `INSERT INTO captured_messages (id, account_id, envelope_from, envelope_to, subject, raw, captured_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO NOTHING`,
    [m.id, m.accountId, m.envelopeFrom, m.envelopeTo, m.subject, m.raw, m.at],
  );
}

// Newest first, keyset on the message id; the raw bytes are fetched one at a time. The page
// size is a parameter like every value.
export async function listCaptured(
  db: Queryable,
  accountId: string | null,
  page: { where: string; orderBy: string; params: unknown[]; limit: number },
): Promise<Omit<CapturedRow, 'raw'>[]> {
  const { rows } = await db.query(
    `SELECT id, account_id, envelope_from, envelope_to, subject, captured_at FROM captured_messages
      WHERE ($1::text IS NULL OR account_id = $1) AND ${page.where}
      ORDER BY ${page.orderBy} LIMIT $${2 + page.params.length}::int`,
    [accountId, ...page.params, page.limit + 1],
  );
  return rows;
}

export async function getCaptured(db: Queryable, accountId: string | null, id: string): Promise<CapturedRow | null> {
  const { rows } = await db.query<CapturedRow>('SELECT * FROM captured_messages WHERE ($1::text IS NULL OR account_id = $1) AND id = $2', [accountId, id]);
  return rows[0] ?? null;
}
