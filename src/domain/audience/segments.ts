import { type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import {
  countMatching, deleteSegment as deleteSegmentRow, insertSegment, selectMatchingPage, selectSegment, selectSegmentPage,
  updateSegment as updateSegmentRow, type SegmentRow,
} from '../../db/queries/segments.js';
import { invalid, notFound } from '../../errors.js';
import { newId } from '../../ids.js';
import { compileSegment, parseSegmentDefinition, SqlParams, type SegmentDefinition, type SegmentMatch, type SegmentNode } from './segment-sql.js';
import { requireLists } from './lists.js';
import { toSubscriber, type Subscriber } from './subscribers.js';

/**
 * Segments: saved filters over an account's subscribers (segment-sql.ts has the condition
 * language). Membership is computed at query time, never stored, so counts are always live.
 */

export const SEGMENT_NAME_MAX = 200;

export interface Segment {
  id: string;
  name: string;
  match: SegmentMatch;
  conditions: SegmentNode[];
  /** Subscribers matching now, whatever their status. */
  subscriberCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface SegmentInput {
  name: string;
  match?: unknown;
  conditions?: unknown;
}

function definitionOf(r: SegmentRow): SegmentDefinition {
  return { match: r.match, conditions: r.conditions as SegmentNode[] };
}

function toSegment(r: SegmentRow, subscriberCount: number): Segment {
  return {
    id: r.id,
    name: r.name,
    match: r.match,
    conditions: r.conditions as SegmentNode[],
    subscriberCount,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function checkName(name: string): string {
  const n = name.trim();
  if (n.length === 0 || n.length > SEGMENT_NAME_MAX) throw invalid('name', `must be 1 to ${SEGMENT_NAME_MAX} characters`);
  return n;
}

/**
 * The SQL filter of a definition for a statement whose $1 is the account id: for features
 * that select segment members themselves (campaign fan-out). Use with `FROM subscribers s`.
 */
export function segmentFilter(accountId: string, def: SegmentDefinition, now: Date = new Date()): { sql: string; params: unknown[] } {
  const params = new SqlParams([accountId]);
  const sql = compileSegment(def, params, now);
  return { sql, params: params.values };
}

/** How many subscribers a definition matches now (also for previews before saving). */
export async function countSegment(db: Queryable, accountId: string, def: SegmentDefinition, now: Date = new Date()): Promise<number> {
  const { sql, params } = segmentFilter(accountId, def, now);
  return countMatching(db, sql, params);
}

/**
 * Counts of a page of segments. One query per segment, a few at a time: measured against one
 * scan with a count(*) FILTER per segment, separate counts were faster (each gets its own plan —
 * indexes, joins, parallel workers) and each stays within the single-count budget.
 */
const COUNT_CONCURRENCY = 4;
async function countAll(db: Queryable, accountId: string, defs: SegmentDefinition[], now: Date): Promise<number[]> {
  const counts: number[] = [];
  for (let i = 0; i < defs.length; i += COUNT_CONCURRENCY) {
    counts.push(...(await Promise.all(defs.slice(i, i + COUNT_CONCURRENCY).map((d) => countSegment(db, accountId, d, now)))));
  }
  return counts;
}

/** The list ids a definition's `list` conditions name, nested groups included. */
function listReferences(node: SegmentNode): string[] {
  if ('conditions' in node) return node.conditions.flatMap(listReferences);
  if (node.field !== 'list') return [];
  return (Array.isArray(node.value) ? node.value : [node.value]).filter((v): v is string => typeof v === 'string');
}

/**
 * Lists named in conditions must be this account's: a condition on another
 * account's list would be stored as a reference to it, so it is refused with 422 like an
 * unknown list, when the segment is created or its conditions change.
 */
async function checkListReferences(db: Queryable, accountId: string, def: SegmentDefinition): Promise<void> {
  const ids = listReferences(def);
  if (ids.length > 0) await requireLists(db, accountId, ids, 'conditions');
}

export async function createSegment(db: Queryable, accountId: string, input: SegmentInput, now: Date = new Date()): Promise<Segment> {
  const name = checkName(input.name);
  const def = parseSegmentDefinition({ match: input.match, conditions: input.conditions ?? [] });
  await checkListReferences(db, accountId, def);
  const row = await insertSegment(db, { id: newId('seg'), accountId, name, match: def.match, conditions: def.conditions, now });
  return toSegment(row, await countSegment(db, accountId, def, now));
}

async function requireSegment(db: Queryable, accountId: string, id: string): Promise<SegmentRow> {
  const row = await selectSegment(db, accountId, id);
  if (!row) throw notFound(`segment ${id}`);
  return row;
}

export async function getSegment(db: Queryable, accountId: string, id: string, now: Date = new Date()): Promise<Segment> {
  const row = await requireSegment(db, accountId, id);
  return toSegment(row, await countSegment(db, accountId, definitionOf(row), now));
}

/** limit + 1 segments from the page's position, each with its live count. */
export async function listSegments(db: Queryable, accountId: string, page: Page, now: Date = new Date()): Promise<Segment[]> {
  const rows = await selectSegmentPage(db, accountId, page);
  const counts = await countAll(db, accountId, rows.slice(0, page.limit).map(definitionOf), now);
  return rows.map((r, i) => toSegment(r, counts[i] ?? 0));
}

export async function updateSegment(
  db: Queryable,
  accountId: string,
  id: string,
  changes: Partial<SegmentInput>,
  now: Date = new Date(),
): Promise<Segment> {
  const current = await requireSegment(db, accountId, id);
  const name = changes.name !== undefined ? checkName(changes.name) : undefined;
  const def = changes.match !== undefined || changes.conditions !== undefined
    ? parseSegmentDefinition({ match: changes.match ?? current.match, conditions: changes.conditions ?? current.conditions })
    : undefined;
  if (changes.conditions !== undefined && def) await checkListReferences(db, accountId, def);
  const row = await updateSegmentRow(db, accountId, id, { name, match: def?.match, conditions: def?.conditions }, now);
  if (!row) throw notFound(`segment ${id}`);
  return toSegment(row, await countSegment(db, accountId, definitionOf(row), now));
}

export async function deleteSegment(db: Queryable, accountId: string, id: string): Promise<void> {
  if (!(await deleteSegmentRow(db, accountId, id))) throw notFound(`segment ${id}`);
}

/** limit + 1 matching subscribers from the page's position (keyset on subscriber id). */
export async function segmentSubscribers(db: Queryable, accountId: string, id: string, page: Page, now: Date = new Date()): Promise<Subscriber[]> {
  const row = await requireSegment(db, accountId, id);
  const { sql, params } = segmentFilter(accountId, definitionOf(row), now);
  return (await selectMatchingPage(db, sql, params, page)).map(toSubscriber);
}

/** The live count of an unsaved definition: what the dashboard's rule builder shows while editing. */
export async function countDefinition(db: Queryable, accountId: string, input: { match?: unknown; conditions?: unknown }, now: Date = new Date()): Promise<number> {
  const def = parseSegmentDefinition({ match: input.match, conditions: input.conditions ?? [] });
  return countSegment(db, accountId, def, now);
}
