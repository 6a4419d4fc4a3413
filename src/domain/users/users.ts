import { createHash, randomBytes } from 'node:crypto';
import { finishPage, keyset, type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import { deleteSessionsOfUser } from '../../db/queries/sessions.js';
import {
  deleteUser, findUserByEmail, getUser, insertSignInLink, insertUser, listUsers, updateUser, type UserRow,
} from '../../db/queries/users.js';
import { AppError, invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { requireAccount } from '../accounts.js';
import { parseEmailAddress } from '../email-address.js';
import { checkPassword, hashPassword } from './passwords.js';

export interface User {
  id: string;
  accountId: string;
  email: string;
  hasPassword: boolean;
  createdAt: string;
  passwordSetAt: string | null;
}

export function toUser(r: UserRow): User {
  return {
    id: r.id,
    accountId: r.account_id,
    email: r.email,
    hasPassword: r.password_hash !== null,
    createdAt: r.created_at.toISOString(),
    passwordSetAt: r.password_set_at?.toISOString() ?? null,
  };
}

export function parseUserEmail(input: string, field = 'email'): { email: string; key: string } {
  const parsed = parseEmailAddress(input);
  if (!parsed.ok) throw invalid(field, parsed.message);
  return { email: parsed.value.address, key: parsed.value.key };
}

export function hashToken(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}

/** Creates a user; without a password the user can only sign in through a one-time link. */
export async function createUser(db: Queryable, input: { accountId: string; email: string; password?: string | null }, now: Date): Promise<User> {
  await requireAccount(db, input.accountId);
  const { email, key } = parseUserEmail(input.email);
  if (input.password != null) checkPassword(input.password);
  const passwordHash = input.password != null ? await hashPassword(input.password) : null;
  const row = await insertUser(db, { id: newId('usr'), accountId: input.accountId, email, emailKey: key, passwordHash, at: now });
  if (!row) throw new AppError('conflict', `a user with the email ${email} already exists`);
  return toUser(row);
}

export async function usersOfAccount(db: Queryable, accountId: string, page: Page): Promise<{ data: User[]; nextCursor: string | null }> {
  const rows = await listUsers(db, accountId, keyset(page, 'id', 2), page.limit);
  const p = finishPage(rows, page, (r) => r.id);
  return { data: p.data.map(toUser), nextCursor: p.nextCursor };
}

/** The user, or null when it was removed (a session outliving its user). */
export async function findUser(db: Queryable, accountId: string, id: string): Promise<User | null> {
  const row = await getUser(db, accountId, id);
  return row ? toUser(row) : null;
}

export async function requireUser(db: Queryable, accountId: string, id: string): Promise<User> {
  const row = await getUser(db, accountId, id);
  if (!row) throw notFound(`user ${id}`);
  return toUser(row);
}

/**
 * Changes a user's email and/or password. A new password signs the user out of every other
 * session (`keepSession` is the one making the change, if any).
 */
export async function changeUser(
  db: Queryable, accountId: string, id: string, input: { email?: string; password?: string }, now: Date, keepSession: Buffer | null,
): Promise<User> {
  const email = input.email !== undefined ? parseUserEmail(input.email) : undefined;
  if (input.password !== undefined) checkPassword(input.password);
  const passwordHash = input.password !== undefined ? await hashPassword(input.password) : undefined;
  const row = await updateUser(db, accountId, id, { email: email?.email, emailKey: email?.key, passwordHash, at: now });
  if (row === 'conflict') throw new AppError('conflict', `a user with the email ${email?.email} already exists`);
  if (!row) throw notFound(`user ${id}`);
  if (passwordHash) await deleteSessionsOfUser(db, id, keepSession);
  return toUser(row);
}

export async function removeUser(db: Queryable, accountId: string, id: string, self: string | null): Promise<void> {
  if (id === self) throw new AppError('conflict', 'you cannot delete the user you are signed in as');
  if (!(await deleteUser(db, accountId, id))) throw notFound(`user ${id}`);
}

/** Resets a password by email (the CLI's `users reset-password`): no account needed, every session ends. */
export async function resetPassword(db: Queryable, emailInput: string, password: string, now: Date): Promise<User> {
  const { key } = parseUserEmail(emailInput);
  const row = await findUserByEmail(db, key);
  if (!row) throw notFound(`user ${emailInput}`);
  return changeUser(db, row.account_id, row.id, { password }, now, null);
}

export const SIGN_IN_LINK_TTL_MS = 24 * 3600_000;

/** A one-time sign-in link token for a user (first start, or `users reset-password --link`). */
export async function createSignInLink(db: Queryable, userId: string, now: Date): Promise<{ token: string; expiresAt: Date }> {
  const token = `sil_${randomBytes(32).toString('base64url')}`;
  const expiresAt = new Date(now.getTime() + SIGN_IN_LINK_TTL_MS);
  await insertSignInLink(db, { hash: hashToken(token), userId, expiresAt });
  return { token, expiresAt };
}

export async function userByEmail(db: Queryable, emailInput: string): Promise<User> {
  const { key } = parseUserEmail(emailInput);
  const row = await findUserByEmail(db, key);
  if (!row) throw notFound(`user ${emailInput}`);
  return toUser(row);
}

/** The sign-in page's address in the dashboard, with the link token in the fragment so no server log sees it. */
export function signInLinkUrl(baseUrl: string, token: string): string {
  return `${baseUrl.replace(/\/$/, '')}/sign-in#link=${token}`;
}
