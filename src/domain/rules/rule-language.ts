import type { FieldError } from '../../errors.js';

/**
 * The one rule language of segments and automations: a tree `{match: "all"|"any",
 * conditions: [...]}` whose conditions are `{field, op, value}` or nested groups of the same
 * shape. This module parses and checks a tree; which fields exist, which ops each takes and
 * which values fit is the vocabulary's business (audience/segment-sql.ts for segments, compiled
 * to SQL; automations/rules.ts for automations, evaluated per run).
 *
 * Paths name each problem from where the rule sits: `conditions[1].conditions[0].op` for a
 * segment's definition (at the top), `steps[2].if.conditions[0].field` for a rule inside an
 * automation. As docs/audience.md promises, a nested group must not be empty (the top group
 * may: no conditions matches everything).
 */

export type RuleMatch = 'all' | 'any';
export interface RuleCondition {
  field: string;
  op: string;
  value?: unknown;
}
export interface RuleGroup {
  match: RuleMatch;
  conditions: RuleNode[];
}
export type RuleNode = RuleCondition | RuleGroup;

export const RULE_LIMITS = { depth: 5, conditions: 200, inValues: 1000, stringValue: 1000, withinDays: 36500, attributePath: 5 } as const;

/** What a rule may say: the fields, the ops of each kind of field, the values that fit. */
export interface RuleVocabulary<Kind extends string> {
  /** The kind of a field, or null when the field is unknown. */
  kindOf(field: string): Kind | null;
  opsOf: Readonly<Record<Kind, readonly string[]>>;
  /** For messages: the fields and ops there are. */
  fields: readonly string[];
  ops: readonly string[];
  /** The keys after the prefix of a field that names a path (`attributes.plan.tier`), else null. */
  pathOf(kind: Kind, field: string): string[] | null;
  /** Why a value does not fit the field's kind and the op, or null when it does. */
  valueProblem(kind: Kind, op: string, value: unknown): string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;
/** An ISO 8601 date or date-time that parses: what gt/gte/lt/lte compare as a date. */
export const isDateString = (v: unknown): v is string => typeof v === 'string' && ISO_DATE.test(v) && !Number.isNaN(Date.parse(v));

/** `at` + `member`, so that a rule at the top names `conditions[0]` and one at `x.if` names `x.if.conditions[0]`. */
function pathJoin(at: string, member: string): string {
  return at === '' ? member : `${at}.${member}`;
}

/**
 * Checks a rule at `at` ('' for a rule that is the whole body), pushing every problem with
 * its path, and returns it normalised (known members only; refused conditions left out).
 */
export function parseRuleTree<Kind extends string>(raw: unknown, at: string, vocabulary: RuleVocabulary<Kind>, errors: FieldError[]): RuleGroup {
  if (!isObject(raw)) {
    errors.push({ field: at === '' ? 'conditions' : at, message: 'must be a rule {match, conditions}' });
    return { match: 'all', conditions: [] };
  }
  const counter = { n: 0 };
  const rule = parseGroup(raw, at, 1, true, vocabulary, errors, counter);
  if (counter.n > RULE_LIMITS.conditions) errors.push({ field: pathJoin(at, 'conditions'), message: `must hold at most ${RULE_LIMITS.conditions} conditions in all` });
  return rule;
}

function parseGroup<Kind extends string>(
  raw: Record<string, unknown>, at: string, depth: number, top: boolean, vocabulary: RuleVocabulary<Kind>, errors: FieldError[], counter: { n: number },
): RuleGroup {
  const match = raw.match ?? 'all';
  if (match !== 'all' && match !== 'any') errors.push({ field: pathJoin(at, 'match'), message: 'must be "all" or "any"' });
  for (const k of Object.keys(raw)) if (k !== 'match' && k !== 'conditions') errors.push({ field: pathJoin(at, k), message: 'is not a known field' });
  const list = raw.conditions;
  if (!Array.isArray(list)) {
    errors.push({ field: pathJoin(at, 'conditions'), message: 'must be an array' });
    return { match: 'all', conditions: [] };
  }
  if (!top && list.length === 0) errors.push({ field: pathJoin(at, 'conditions'), message: 'must not be empty in a nested group' });
  if (depth > RULE_LIMITS.depth) {
    errors.push({ field: pathJoin(at, 'conditions'), message: `groups may be nested at most ${RULE_LIMITS.depth} deep` });
    return { match: 'all', conditions: [] };
  }
  const conditions: RuleNode[] = [];
  list.forEach((node: unknown, i: number) => {
    const here = pathJoin(at, `conditions[${i}]`);
    if (!isObject(node)) {
      errors.push({ field: here, message: 'must be a condition {field, op, value} or a group {match, conditions}' });
    } else if ('conditions' in node) {
      if ('field' in node || 'op' in node) errors.push({ field: here, message: 'is either a condition or a group, not both' });
      else conditions.push(parseGroup(node, here, depth + 1, false, vocabulary, errors, counter));
    } else {
      counter.n++;
      const c = parseCondition(node, here, vocabulary, errors);
      if (c) conditions.push(c);
    }
  });
  return { match: match === 'any' ? 'any' : 'all', conditions };
}

function parseCondition<Kind extends string>(node: Record<string, unknown>, at: string, vocabulary: RuleVocabulary<Kind>, errors: FieldError[]): RuleCondition | null {
  const before = errors.length;
  for (const k of Object.keys(node)) if (k !== 'field' && k !== 'op' && k !== 'value') errors.push({ field: `${at}.${k}`, message: 'is not a known field' });
  const { field, op, value } = node;
  if (typeof field !== 'string') {
    errors.push({ field: `${at}.field`, message: 'must be a string' });
    return null;
  }
  const kind = vocabulary.kindOf(field);
  if (!kind) errors.push({ field: `${at}.field`, message: `unknown field ${JSON.stringify(field)} (known: ${vocabulary.fields.join(', ')})` });
  if (typeof op !== 'string' || !vocabulary.ops.includes(op)) {
    errors.push({ field: `${at}.op`, message: `unknown op ${JSON.stringify(op)} (known: ${vocabulary.ops.join(', ')})` });
    return null;
  }
  if (!kind) return null;
  const path = vocabulary.pathOf(kind, field);
  if (path && (path.length > RULE_LIMITS.attributePath || path.some((p) => p.length === 0 || p.length > 100))) {
    errors.push({ field: `${at}.field`, message: `path must be 1 to ${RULE_LIMITS.attributePath} non-empty keys of at most 100 characters` });
  }
  if (!vocabulary.opsOf[kind].includes(op)) {
    errors.push({ field: `${at}.op`, message: `op "${op}" is not supported for field ${JSON.stringify(field)} (supported: ${vocabulary.opsOf[kind].join(', ')})` });
    return null;
  }
  const problem = vocabulary.valueProblem(kind, op, value);
  if (problem) errors.push({ field: `${at}.value`, message: problem });
  if (errors.length > before) return null;
  return op === 'exists' || op === 'not_exists' ? { field, op } : { field, op, value };
}
