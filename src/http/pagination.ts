import { Type, type Static } from 'typebox';
import { invalid } from '../errors.js';

/**
 * List conventions (DESIGN.md §5): `limit` (default 50, max 500), `order=asc|desc`
 * (desc = newest first) and an opaque `cursor` from the previous page's `nextCursor`.
 * Ids are time-ordered (UUIDv7), so keyset pagination on the id is stable under inserts:
 * a new row never shifts a page and is never returned twice.
 */
export const ListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Page size, 1–500' }),
  order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc', description: 'desc = newest first' }),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
});
export type ListQuery = Static<typeof ListQuery>;

export const listResponse = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ data: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });

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

export function pageOf(q: ListQuery): Page {
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
