import { invalid } from '../errors.js';

/**
 * Keyset pagination on time-ordered ids (UUIDv7): `limit`, `order` (desc = newest first) and an
 * opaque cursor naming the last id of the previous page. A new row never shifts a page and is
 * never returned twice, which is what polling connectors need. The HTTP query schema for these
 * parameters is in http/pagination.ts.
 */
export interface Page {
  limit: number;
  order: 'asc' | 'desc';
  /** The id after which (in `order`) this page starts, or null for the first page. */
  afterId: string | null;
}

export function encodeCursor(id: string): string {
  return Buffer.from(`v1:${id}`).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): string | null {
  if (!cursor) return null;
  const raw = Buffer.from(cursor, 'base64url').toString();
  if (!raw.startsWith('v1:') || !/^[a-z]+_[0-9a-f]{32}$/.test(raw.slice(3))) throw invalid('cursor', 'is not a cursor returned by this API');
  return raw.slice(3);
}

export function pageOf(q: { limit: number; order: 'asc' | 'desc'; cursor?: string }): Page {
  return { limit: q.limit, order: q.order, afterId: decodeCursor(q.cursor) };
}

/**
 * SQL fragments for keyset pagination on column `col`. Fetch `limit + 1` rows and hand them
 * to `finishPage`, which trims the extra row and produces `nextCursor`.
 * Usage: `... WHERE account_id = $1 AND ${k.where} ORDER BY ${k.orderBy} LIMIT ${k.limitParam}`.
 */
export function keyset(page: Page, col: string, nextParam: number): { where: string; orderBy: string; params: unknown[] } {
  const cmp = page.order === 'desc' ? '<' : '>';
  return {
    where: page.afterId ? `${col} ${cmp} $${nextParam}` : 'TRUE',
    orderBy: `${col} ${page.order === 'desc' ? 'DESC' : 'ASC'}`,
    params: page.afterId ? [page.afterId] : [],
  };
}

export function finishPage<T>(rows: T[], page: Page, idOf: (row: T) => string): { data: T[]; nextCursor: string | null } {
  const more = rows.length > page.limit;
  const data = more ? rows.slice(0, page.limit) : rows;
  return { data, nextCursor: more ? encodeCursor(idOf(data[data.length - 1])) : null };
}
