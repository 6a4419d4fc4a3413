import type { FieldError } from '../../errors.js';
import {
  isDateString, parseRuleTree, RULE_LIMITS, type RuleCondition, type RuleGroup, type RuleVocabulary,
} from '../rules/rule-language.js';

export type { RuleCondition, RuleGroup };

/**
 * The rule language of automations: the segments' shape — `{match: "all"|"any", conditions}`
 * with conditions `{field, op, value}` or nested groups — over what one run knows, evaluated
 * in the worker rather than compiled to SQL (a run is one address, not a table scan).
 *
 * Fields (docs/automations.md has the table):
 *   data.<key>[.<k>]           the trigger's data: eq neq contains starts_with gt gte lt lte in exists not_exists
 *   email, name                the address / the subscriber's name: eq neq contains starts_with in (+ exists not_exists for name)
 *   status                     the subscriber's status: eq neq in
 *   createdAt                  when the subscriber was created: gt gte lt lte, within not_within (days)
 *   list                       list membership: eq neq in exists not_exists
 *   attributes.<key>[.<k>]     subscriber attributes, ops as data
 *   opened, clicked            this run opened / clicked one of its earlier sends: exists not_exists
 *   wait                       how the last "wait until" ended: eq neq, value "event" or "timeout"
 * Without a subscriber for the address, subscriber fields are absent (name/status/list match
 * nothing except not_exists / neq).
 */

export interface RuleSubscriber {
  name: string | null;
  status: string;
  createdAt: Date;
  lists: string[];
  attributes: Record<string, unknown>;
}

export interface RuleContext {
  email: string;
  data: Record<string, unknown>;
  subscriber: RuleSubscriber | null;
  opened: boolean;
  clicked: boolean;
  waitOutcome: 'event' | 'timeout' | null;
  now: Date;
}

type Kind = 'data' | 'email' | 'name' | 'status' | 'createdAt' | 'list' | 'attribute' | 'engagement' | 'wait';

const VALUE_OPS = ['eq', 'neq', 'contains', 'starts_with', 'gt', 'gte', 'lt', 'lte', 'in', 'exists', 'not_exists'];
const OPS_OF: Record<Kind, readonly string[]> = {
  data: VALUE_OPS,
  attribute: VALUE_OPS,
  email: ['eq', 'neq', 'contains', 'starts_with', 'in'],
  name: ['eq', 'neq', 'contains', 'starts_with', 'in', 'exists', 'not_exists'],
  status: ['eq', 'neq', 'in'],
  createdAt: ['gt', 'gte', 'lt', 'lte', 'within', 'not_within'],
  list: ['eq', 'neq', 'in', 'exists', 'not_exists'],
  engagement: ['exists', 'not_exists'],
  wait: ['eq', 'neq'],
};
export const RULE_FIELDS = ['data.<key>', 'email', 'name', 'status', 'createdAt', 'list', 'attributes.<key>', 'opened', 'clicked', 'wait'] as const;
const ALL_OPS = [...VALUE_OPS, 'within', 'not_within'];
const DAY_MS = 86_400_000;

function kindOf(field: string): Kind | null {
  if (field === 'email' || field === 'name' || field === 'status' || field === 'createdAt' || field === 'list' || field === 'wait') return field;
  if (field === 'opened' || field === 'clicked') return 'engagement';
  if (field.startsWith('data.')) return 'data';
  if (field.startsWith('attributes.')) return 'attribute';
  return null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => (typeof v === 'string' && v.length <= RULE_LIMITS.stringValue) || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';

// ---------------------------------------------------------------------------------------
// Validation

const AUTOMATION_VOCABULARY: RuleVocabulary<Kind> = {
  kindOf,
  opsOf: OPS_OF,
  fields: RULE_FIELDS,
  ops: ALL_OPS,
  pathOf: (kind, field) => (kind === 'data' || kind === 'attribute' ? field.slice(field.indexOf('.') + 1).split('.') : null),
  valueProblem,
};

/** Checks a rule at `at` (e.g. `steps[2].if`), pushing each problem with its path. */
export function parseRule(raw: unknown, at: string, errors: FieldError[]): RuleGroup {
  return parseRuleTree(raw, at, AUTOMATION_VOCABULARY, errors);
}

function valueProblem(kind: Kind, op: string, v: unknown): string | null {
  if (op === 'exists' || op === 'not_exists') return v === undefined || v === null ? null : `must be absent for ${op}`;
  if (kind === 'wait') return v === 'event' || v === 'timeout' ? null : 'must be "event" or "timeout"';
  if (op === 'within' || op === 'not_within') {
    return Number.isInteger(v) && (v as number) >= 1 && (v as number) <= RULE_LIMITS.withinDays ? null : `must be a whole number of days, 1 to ${RULE_LIMITS.withinDays}`;
  }
  const valued = kind === 'data' || kind === 'attribute';
  if (op === 'in') {
    if (!Array.isArray(v) || v.length === 0 || v.length > RULE_LIMITS.inValues) return `must be an array of 1 to ${RULE_LIMITS.inValues} values`;
    return v.every((x) => (valued ? isScalar(x) : typeof x === 'string' && x.length <= RULE_LIMITS.stringValue)) ? null : valued ? 'must hold strings, numbers or booleans' : 'must hold strings';
  }
  if (op === 'contains' || op === 'starts_with') {
    return typeof v === 'string' && v.length > 0 && v.length <= RULE_LIMITS.stringValue ? null : `must be a non-empty string of at most ${RULE_LIMITS.stringValue} characters`;
  }
  if (op === 'gt' || op === 'gte' || op === 'lt' || op === 'lte') {
    if (kind === 'createdAt') return isDateString(v) ? null : 'must be an ISO 8601 date or date-time';
    return (typeof v === 'number' && Number.isFinite(v)) || isDateString(v) ? null : 'must be a number or an ISO 8601 date';
  }
  if (valued) return isScalar(v) ? null : 'must be a string, number or boolean';
  return typeof v === 'string' && v.length <= RULE_LIMITS.stringValue ? null : `must be a string of at most ${RULE_LIMITS.stringValue} characters`;
}

/** Whether a rule reads subscriber fields (so the engine loads the subscriber only when needed). */
export function ruleNeedsSubscriber(rule: RuleGroup): boolean {
  return rule.conditions.some((c) => ('conditions' in c ? ruleNeedsSubscriber(c) : ['name', 'status', 'createdAt', 'list', 'attribute'].includes(kindOf(c.field) ?? '')));
}

/** Whether a rule reads the run's engagement (opened / clicked). */
export function ruleNeedsEngagement(rule: RuleGroup): boolean {
  return rule.conditions.some((c) => ('conditions' in c ? ruleNeedsEngagement(c) : kindOf(c.field) === 'engagement'));
}

// ---------------------------------------------------------------------------------------
// Evaluation

export function evaluateRule(rule: RuleGroup, ctx: RuleContext): boolean {
  if (rule.conditions.length === 0) return true;
  const results = rule.conditions.map((c) => ('conditions' in c ? evaluateRule(c, ctx) : evaluateCondition(c, ctx)));
  return rule.match === 'any' ? results.some(Boolean) : results.every(Boolean);
}

function pathValue(root: unknown, path: string[]): unknown {
  let v = root;
  for (const k of path) {
    if (!isObject(v)) return undefined;
    v = v[k];
  }
  return v;
}

function evaluateCondition(c: RuleCondition, ctx: RuleContext): boolean {
  const kind = kindOf(c.field)!;
  const s = ctx.subscriber;
  switch (kind) {
    case 'data': return valueMatches(pathValue(ctx.data, c.field.slice(5).split('.')), c);
    case 'attribute': return valueMatches(s ? pathValue(s.attributes, c.field.slice(11).split('.')) : undefined, c);
    case 'email': return textMatches(ctx.email.toLowerCase(), c, true);
    case 'name': return textMatches(s?.name ?? null, c, false);
    case 'status': return textMatches(s?.status ?? null, c, false);
    case 'createdAt': {
      if (!s) return false;
      const t = s.createdAt.getTime();
      if (c.op === 'within') return t >= ctx.now.getTime() - (c.value as number) * DAY_MS;
      if (c.op === 'not_within') return t < ctx.now.getTime() - (c.value as number) * DAY_MS;
      return compare(t, Date.parse(c.value as string), c.op);
    }
    case 'list': {
      const lists = s?.lists ?? [];
      switch (c.op) {
        case 'eq': return lists.includes(c.value as string);
        case 'neq': return !lists.includes(c.value as string);
        case 'in': return (c.value as string[]).some((l) => lists.includes(l));
        case 'exists': return lists.length > 0;
        default: return lists.length === 0;
      }
    }
    case 'engagement': {
      const did = c.field === 'opened' ? ctx.opened : ctx.clicked;
      return c.op === 'exists' ? did : !did;
    }
    case 'wait': return c.op === 'eq' ? ctx.waitOutcome === c.value : ctx.waitOutcome !== c.value;
  }
}

function compare(a: number, b: number, op: string): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return false;
  switch (op) {
    case 'gt': return a > b;
    case 'gte': return a >= b;
    case 'lt': return a < b;
    default: return a <= b;
  }
}

/** email (lower-cased on both sides), name and status. */
function textMatches(actual: string | null, c: RuleCondition, lower: boolean): boolean {
  const norm = (x: unknown) => (lower ? String(x).toLowerCase() : String(x));
  switch (c.op) {
    case 'eq': return actual !== null && actual === norm(c.value);
    case 'neq': return actual !== norm(c.value);
    case 'in': return actual !== null && (c.value as unknown[]).map(norm).includes(actual);
    case 'contains': return actual !== null && actual.toLowerCase().includes(String(c.value).toLowerCase());
    case 'starts_with': return actual !== null && actual.toLowerCase().startsWith(String(c.value).toLowerCase());
    case 'exists': return actual !== null && actual !== '';
    default: return actual === null || actual === '';
  }
}

/** data.* and attributes.*: the value's JSON type picks the comparison, as in segments. */
function valueMatches(actual: unknown, c: RuleCondition): boolean {
  const present = actual !== undefined && actual !== null;
  const v = c.value;
  const asText = (x: unknown) => (typeof x === 'string' ? x : typeof x === 'number' || typeof x === 'boolean' ? String(x) : null);
  const same = (x: unknown) => {
    if (!present) return false;
    if (typeof x === 'number') return Number(asText(actual)) === x && asText(actual) !== '';
    if (typeof x === 'boolean') return asText(actual)?.toLowerCase() === String(x);
    return asText(actual) === x;
  };
  switch (c.op) {
    case 'exists': return present;
    case 'not_exists': return !present;
    case 'eq': return same(v);
    case 'neq': return !same(v);
    case 'in': return (v as unknown[]).some(same);
    case 'contains': return (asText(actual)?.toLowerCase() ?? '').includes(String(v).toLowerCase()) && present;
    case 'starts_with': return present && (asText(actual)?.toLowerCase() ?? '').startsWith(String(v).toLowerCase());
    default: {
      const text = asText(actual);
      if (!present || text === null) return false;
      if (typeof v === 'number') return text.trim() !== '' && compare(Number(text), v, c.op);
      return isDateString(text) && compare(Date.parse(text), Date.parse(v as string), c.op);
    }
  }
}
