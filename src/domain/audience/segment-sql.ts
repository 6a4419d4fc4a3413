import { AppError, type FieldError } from '../../errors.js';
import {
  isDateString, parseRuleTree, RULE_LIMITS, type RuleCondition, type RuleGroup, type RuleMatch, type RuleNode, type RuleVocabulary,
} from '../rules/rule-language.js';

/**
 * Segment definitions and their compilation to SQL.
 *
 * A definition is a tree: `{match: "all"|"any", conditions: [...]}` where each condition is
 * `{field, op, value}` or a nested group of the same shape. It compiles to a boolean SQL
 * expression over `subscribers s` built only from fixed text written here: every value, list
 * id, date and attribute key goes into the parameter array and appears as `$n::type`. A field
 * or op outside the tables below never reaches SQL: parsing refuses it with a 422 naming it.
 *
 * Fields and their ops (docs/audience.md has the full table):
 *   email, name            eq neq contains starts_with in (+ exists not_exists for name)
 *   status                 eq neq in
 *   createdAt              gt gte lt lte (ISO 8601), within not_within (days)
 *   list                   eq neq in exists not_exists (membership)
 *   attributes.<key>[.<k>] eq neq contains starts_with gt gte lt lte in exists not_exists;
 *                          the value's JSON type picks string, number, boolean or date
 *                          comparison (a string like 2026-01-31 with gt… compares as a date)
 *   opened clicked received  within not_within (days), exists not_exists (ever) — from events
 * String contains / starts_with ignore case, as does everything on email.
 */

export type SegmentMatch = RuleMatch;
export type SegmentCondition = RuleCondition;
export type SegmentGroup = RuleGroup;
export type SegmentNode = RuleNode;
export type SegmentDefinition = SegmentGroup;

export const SEGMENT_LIMITS = RULE_LIMITS;

type Kind = 'email' | 'name' | 'status' | 'createdAt' | 'list' | 'attribute' | 'engagement';

const OPS_OF: Record<Kind, readonly string[]> = {
  email: ['eq', 'neq', 'contains', 'starts_with', 'in'],
  name: ['eq', 'neq', 'contains', 'starts_with', 'in', 'exists', 'not_exists'],
  status: ['eq', 'neq', 'in'],
  createdAt: ['gt', 'gte', 'lt', 'lte', 'within', 'not_within'],
  list: ['eq', 'neq', 'in', 'exists', 'not_exists'],
  attribute: ['eq', 'neq', 'contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'in', 'exists', 'not_exists'],
  engagement: ['within', 'not_within', 'exists', 'not_exists'],
};
export const SEGMENT_OPS = ['eq', 'neq', 'contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'in', 'exists', 'not_exists', 'within', 'not_within'] as const;
export const SEGMENT_FIELDS = ['email', 'name', 'status', 'createdAt', 'list', 'attributes.<key>', 'opened', 'clicked', 'received'] as const;

/** Engagement field → the event type it reads ("received" = delivered). */
const EVENT_OF: Record<string, string> = { opened: 'open', clicked: 'click', received: 'delivered' };
const STATUSES = ['active', 'unconfirmed', 'unsubscribed', 'bounced', 'complained'];
const COMPARE: Record<string, string> = { eq: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' };
const DAY_MS = 24 * 60 * 60 * 1000;

function kindOf(field: string): Kind | null {
  if (field === 'email' || field === 'name' || field === 'status' || field === 'createdAt' || field === 'list') return field;
  if (field in EVENT_OF) return 'engagement';
  if (field.startsWith('attributes.')) return 'attribute';
  return null;
}

function attributePath(field: string): string[] {
  return field.slice('attributes.'.length).split('.');
}


// ---------------------------------------------------------------------------------------
// Parsing and validation

const SEGMENT_VOCABULARY: RuleVocabulary<Kind> = {
  kindOf,
  opsOf: OPS_OF,
  fields: SEGMENT_FIELDS,
  ops: SEGMENT_OPS,
  pathOf: (kind, field) => (kind === 'attribute' ? attributePath(field) : null),
  valueProblem,
};

/**
 * Checks a definition from a request and returns it normalised (only known members). Every
 * problem is reported, each with its path, e.g. `conditions[1].conditions[0].op: unknown op "like"`.
 */
export function parseSegmentDefinition(raw: { match?: unknown; conditions?: unknown }): SegmentDefinition {
  const errors: FieldError[] = [];
  const def = parseRuleTree(raw, '', SEGMENT_VOCABULARY, errors);
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  return def;
}

function valueProblem(kind: Kind, op: string, v: unknown): string | null {
  const scalarString = (x: unknown) => typeof x === 'string' && x.length <= SEGMENT_LIMITS.stringValue;
  if (op === 'exists' || op === 'not_exists') return v === undefined || v === null ? null : `must be absent for ${op}`;
  if (op === 'within' || op === 'not_within') {
    return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= SEGMENT_LIMITS.withinDays ? null : `must be a whole number of days, 1 to ${SEGMENT_LIMITS.withinDays}`;
  }
  if (op === 'in') {
    if (!Array.isArray(v) || v.length === 0 || v.length > SEGMENT_LIMITS.inValues) return `must be an array of 1 to ${SEGMENT_LIMITS.inValues} values`;
    const ok = kind === 'attribute'
      ? v.every((x) => scalarString(x) || (typeof x === 'number' && Number.isFinite(x)) || typeof x === 'boolean')
      : v.every(scalarString);
    if (!ok) return kind === 'attribute' ? 'must hold strings, numbers or booleans' : 'must hold strings';
    if (kind === 'status' && !v.every((x) => STATUSES.includes(x as string))) return `must hold statuses (${STATUSES.join(', ')})`;
    return null;
  }
  if (op === 'contains' || op === 'starts_with') return scalarString(v) && (v as string).length > 0 ? null : `must be a non-empty string of at most ${SEGMENT_LIMITS.stringValue} characters`;
  if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') {
    if (kind === 'createdAt') return isDateString(v) ? null : 'must be an ISO 8601 date or date-time';
    return (typeof v === 'number' && Number.isFinite(v)) || isDateString(v) ? null : 'must be a number or an ISO 8601 date';
  }
  // eq, neq
  if (kind === 'status') return STATUSES.includes(v as string) ? null : `must be a status (${STATUSES.join(', ')})`;
  if (kind === 'attribute') {
    return scalarString(v) || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean' ? null : 'must be a string, number or boolean';
  }
  return scalarString(v) ? null : `must be a string of at most ${SEGMENT_LIMITS.stringValue} characters`;
}

// ---------------------------------------------------------------------------------------
// Compilation

/**
 * Collects query parameters; `add` returns the typed placeholder to put in the SQL text. For
 * segments the first value must be the account id: compiled SQL refers to it as $1.
 */
export class SqlParams {
  readonly values: unknown[];
  constructor(initial: unknown[] = []) {
    this.values = [...initial];
  }
  add(value: unknown, type: 'text' | 'text[]' | 'numeric' | 'numeric[]' | 'timestamptz'): string {
    this.values.push(value);
    return `$${this.values.length}::${type}`;
  }
}

/**
 * The definition as a boolean SQL expression over `subscribers s` (parameters appended to
 * `params`, whose $1 must be the account id), for a WHERE clause. `now` anchors "within N days".
 * Expects a parsed definition.
 *
 * Membership tests (lists, events) directly under the top-level "all" are written as [NOT]
 * EXISTS: the planner turns them into semi/anti joins and picks hash or index nested loop.
 * Under an OR that rewrite is impossible and a correlated EXISTS would run once per
 * subscriber, so there they are written as uncorrelated [NOT] IN (subquery), which runs once,
 * as a hashed subplan.
 */
export function compileSegment(def: SegmentDefinition, params: SqlParams, now: Date): string {
  if (params.values.length === 0) throw new Error('segment SQL parameters must start with the account id');
  if (def.conditions.length === 0) return 'TRUE';
  return compileGroup(def, params, now, def.match === 'all');
}

function compileGroup(g: SegmentGroup, params: SqlParams, now: Date, joinable: boolean): string {
  const parts = g.conditions.map((c) => ('conditions' in c ? compileGroup(c, params, now, false) : compileCondition(c, params, now, joinable)));
  return `(${parts.join(g.match === 'any' ? ' OR ' : ' AND ')})`;
}

function compileCondition(c: SegmentCondition, p: SqlParams, now: Date, joinable: boolean): string {
  const kind = kindOf(c.field);
  switch (kind) {
    case 'email': return textCondition('s.email_lower', c, p, true);
    case 'name': return textCondition('s.name', c, p, false);
    case 'status':
      if (c.op === 'in') return `s.status = ANY(${p.add(c.value, 'text[]')})`;
      return `s.status ${c.op === 'eq' ? '=' : '<>'} ${p.add(c.value, 'text')}`;
    case 'createdAt': {
      if (c.op === 'within' || c.op === 'not_within') {
        return `s.created_at ${c.op === 'within' ? '>=' : '<'} ${p.add(daysBefore(now, c.value as number), 'timestamptz')}`;
      }
      return `s.created_at ${COMPARE[c.op]} ${p.add(new Date(c.value as string).toISOString(), 'timestamptz')}`;
    }
    case 'list': return listCondition(c, p, joinable);
    case 'attribute': return attributeCondition(c, p);
    case 'engagement': return engagementCondition(c, p, now, joinable);
    default: throw new Error(`segment field not validated: ${c.field}`);
  }
}

/** email (case-insensitive throughout: `col` is already lower-cased) and name. */
function textCondition(col: string, c: SegmentCondition, p: SqlParams, lowerValues: boolean): string {
  const val = (v: unknown) => (lowerValues ? String(v).toLowerCase() : v);
  switch (c.op) {
    case 'eq': return `${col} = ${p.add(val(c.value), 'text')}`;
    case 'neq': return `${col} IS DISTINCT FROM ${p.add(val(c.value), 'text')}`;
    case 'in': return `${col} = ANY(${p.add((c.value as unknown[]).map(val), 'text[]')})`;
    case 'contains': return lowerValues ? `strpos(${col}, ${p.add(val(c.value), 'text')}) > 0` : `strpos(lower(${col}), lower(${p.add(c.value, 'text')})) > 0`;
    case 'starts_with': return lowerValues ? `starts_with(${col}, ${p.add(val(c.value), 'text')})` : `starts_with(lower(${col}), lower(${p.add(c.value, 'text')}))`;
    case 'exists': return `coalesce(${col}, '') <> ''`;
    case 'not_exists': return `coalesce(${col}, '') = ''`;
  }
  throw new Error(`op not validated: ${c.op}`);
}

/** The statement's account id parameter: SqlParams for segments always start with it. */
const ACCOUNT = '$1::text';

/**
 * A membership test: `s` is (or with `negate`, is not) among the rows of `from` matching
 * `filter`. Joinable: correlated [NOT] EXISTS on `link`; otherwise `key` [NOT] IN an
 * uncorrelated subquery selecting `selected` (see compileSegment for which is used where).
 * `filter` must not mention `s`.
 */
function membership(
  joinable: boolean,
  negate: boolean,
  t: { from: string; link: string; key: string; selected: string; filter: string },
): string {
  const not = negate ? 'NOT ' : '';
  if (joinable) return `${not}EXISTS (SELECT 1 FROM ${t.from} WHERE ${t.link} AND ${t.filter})`;
  return `${not}(${t.key} IN (SELECT ${t.selected} FROM ${t.from} WHERE ${t.filter}))`;
}

function listCondition(c: SegmentCondition, p: SqlParams, joinable: boolean): string {
  const member = (negate: boolean, filter: string) =>
    membership(joinable, negate, { from: 'subscriber_lists m', link: 'm.subscriber_id = s.id', key: 's.id', selected: 'm.subscriber_id', filter });
  switch (c.op) {
    case 'eq': return member(false, `m.list_id = ${p.add(c.value, 'text')}`);
    case 'neq': return member(true, `m.list_id = ${p.add(c.value, 'text')}`);
    case 'in': return member(false, `m.list_id = ANY(${p.add(c.value, 'text[]')})`);
    case 'exists': return member(false, `m.account_id = ${ACCOUNT}`);
    case 'not_exists': return member(true, `m.account_id = ${ACCOUNT}`);
  }
  throw new Error(`op not validated: ${c.op}`);
}

/**
 * The attribute's text (`->>` key, or `#>>` dotted path), the key(s) always a parameter. Typed
 * comparisons go through audience_numeric / audience_timestamptz (migration 003), which give
 * NULL for values that are not numbers / dates, so such rows simply do not match.
 */
function attributeCondition(c: SegmentCondition, p: SqlParams): string {
  const keys = attributePath(c.field);
  // One key: ->> / -> (cheaper); a dotted path: #>> / #>. Either way the keys are parameters.
  const path = keys.length === 1 ? p.add(keys[0], 'text') : p.add(keys, 'text[]');
  const [get, getText] = keys.length === 1 ? ['->', '->>'] : ['#>', '#>>'];
  const text = `(s.attributes ${getText} ${path})`;
  const v = c.value;
  switch (c.op) {
    case 'exists': return `coalesce(jsonb_typeof(s.attributes ${get} ${path}), 'null') <> 'null'`;
    case 'not_exists': return `coalesce(jsonb_typeof(s.attributes ${get} ${path}), 'null') = 'null'`;
    case 'contains': return `strpos(lower(${text}), lower(${p.add(v, 'text')})) > 0`;
    case 'starts_with': return `starts_with(lower(${text}), lower(${p.add(v, 'text')}))`;
    case 'in': {
      const values = v as unknown[];
      if (values.every((x) => typeof x === 'number')) return `audience_numeric(${text}) = ANY(${p.add(values, 'numeric[]')})`;
      return `${text} = ANY(${p.add(values.map(String), 'text[]')})`;
    }
    case 'eq':
    case 'neq': {
      const op = c.op === 'eq' ? '=' : 'IS DISTINCT FROM';
      if (typeof v === 'number') return `audience_numeric(${text}) ${op} ${p.add(v, 'numeric')}`;
      if (typeof v === 'boolean') return `lower(${text}) ${op} ${p.add(String(v), 'text')}`;
      return `${text} ${op} ${p.add(v, 'text')}`;
    }
    default: {
      const op = COMPARE[c.op];
      if (typeof v === 'number') return `audience_numeric(${text}) ${op} ${p.add(v, 'numeric')}`;
      return `audience_timestamptz(${text}) ${op} ${p.add(new Date(v as string).toISOString(), 'timestamptz')}`;
    }
  }
}

/**
 * Engagement from the events table, matched on lower(email) within the account — the shape of
 * the events_engagement index (account_id, lower(email), type, occurred_at).
 */
function engagementCondition(c: SegmentCondition, p: SqlParams, now: Date, joinable: boolean): string {
  const since = c.op === 'within' || c.op === 'not_within' ? ` AND e.occurred_at >= ${p.add(daysBefore(now, c.value as number), 'timestamptz')}` : '';
  const filter = `e.account_id = ${ACCOUNT} AND e.type = ${p.add(EVENT_OF[c.field], 'text')}${since}`;
  const negate = c.op === 'not_within' || c.op === 'not_exists';
  return membership(joinable, negate, { from: 'events e', link: 'lower(e.email) = s.email_lower', key: 's.email_lower', selected: 'lower(e.email)', filter });
}

function daysBefore(now: Date, days: number): string {
  return new Date(now.getTime() - days * DAY_MS).toISOString();
}
