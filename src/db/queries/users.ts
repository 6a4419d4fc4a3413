import type { Queryable } from '../pool.js';

export interface UserRow {
  id: string;
  account_id: string;
  email: string;
  email_key: string;
  password_hash: string | null;
  created_at: Date;
  password_set_at: Date | null;
}

const COLUMNS = 'id, account_id, email, email_key, password_hash, created_at, password_set_at';

// The unique email_key turns a duplicate into a conflict the caller reports (ON CONFLICT → no row).
export async function insertUser(
  db: Queryable,
  u: { id: string; accountId: string; email: string; emailKey: string; passwordHash: string | null; at: Date },
): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(
    `INSERT INTO users (id, account_id, email, email_key, password_hash, created_at, password_set_at)
     VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $5::text IS NULL THEN NULL ELSE $6::timestamptz END)
     ON CONFLICT (email_key) DO NOTHING RETURNING ${COLUMNS}`,
    [u.id, u.accountId, u.email, u.emailKey, u.passwordHash, u.at],
  );
  return rows[0] ?? null;
}

// Sign-in looks a user up by the matching form of the address, across accounts.
export async function findUserByEmail(db: Queryable, emailKey: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE email_key = $1`, [emailKey]);
  return rows[0] ?? null;
}

// Scoped by account: another account's user id is simply not found.
export async function getUser(db: Queryable, accountId: string, id: string): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(`SELECT ${COLUMNS} FROM users WHERE account_id = $1 AND id = $2`, [accountId, id]);
  return rows[0] ?? null;
}

// Keyset page over time-ordered ids; the caller fetches limit + 1 to learn whether more follow.
export async function listUsers(
  db: Queryable, accountId: string, k: { where: string; orderBy: string; params: unknown[] }, limit: number,
): Promise<UserRow[]> {
  const { rows } = await db.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${limit + 1}`,
    [accountId, ...k.params],
  );
  return rows;
}

// Email and password change independently; NULL keeps the current value. A new password
// also ends every other session of the user (done by the caller in the same transaction).
export async function updateUser(
  db: Queryable, accountId: string, id: string, u: { email?: string; emailKey?: string; passwordHash?: string; at: Date },
): Promise<UserRow | null | 'conflict'> {
  try {
    const { rows } = await db.query<UserRow>(
      `UPDATE users SET email = coalesce($3, email), email_key = coalesce($4, email_key),
              password_hash = coalesce($5, password_hash),
              password_set_at = CASE WHEN $5::text IS NULL THEN password_set_at ELSE $6::timestamptz END
        WHERE account_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [accountId, id, u.email ?? null, u.emailKey ?? null, u.passwordHash ?? null, u.at],
    );
    return rows[0] ?? null;
  } catch (err) {
    if ((err as { code?: string }).code === '23505') return 'conflict';
    throw err;
  }
}

// Deleting a user cascades to its sessions and sign-in links.
export async function deleteUser(db: Queryable, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM users WHERE account_id = $1 AND id = $2', [accountId, id]);
  return (rowCount ?? 0) > 0;
}

export async function insertSignInLink(db: Queryable, l: { hash: Buffer; userId: string; expiresAt: Date }): Promise<void> {
  await db.query('INSERT INTO sign_in_links (token_hash, user_id, expires_at) VALUES ($1, $2, $3)', [l.hash, l.userId, l.expiresAt]);
}

// Single use: the UPDATE marks the link used and returns its user only if it was unused and
// unexpired, so two tabs opening the same link get one session between them.
export async function consumeSignInLink(db: Queryable, hash: Buffer, now: Date): Promise<UserRow | null> {
  const { rows } = await db.query<UserRow>(
    `WITH l AS (
       UPDATE sign_in_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id
     )
     SELECT ${COLUMNS.split(', ').map((c) => 'u.' + c).join(', ')} FROM users u JOIN l ON l.user_id = u.id`,
    [hash, now],
  );
  return rows[0] ?? null;
}
