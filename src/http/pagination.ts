import { Type, type Static } from 'typebox';

/** The paging itself (cursors, pages) is db/pagination.ts; routes take it from here. */
export { finishPage, pageOf } from '../db/pagination.js';

/**
 * List conventions (docs/architecture.md, "API conventions"): `limit` (default 50, max 500), `order=asc|desc`
 * (desc = newest first) and an opaque `cursor` from the previous page's `nextCursor`.
 * The paging itself is db/pagination.ts.
 */
export const ListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'Page size, 1–500' }),
  order: Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc', description: 'desc = newest first' }),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'nextCursor of the previous page' })),
});
export type ListQuery = Static<typeof ListQuery>;

export const listResponse = <T extends ReturnType<typeof Type.Object>>(item: T) =>
  Type.Object({ data: Type.Array(item), nextCursor: Type.Union([Type.String(), Type.Null()]) });
