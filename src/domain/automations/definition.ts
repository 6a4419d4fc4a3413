import { AppError, type FieldError } from '../../errors.js';
import { checkTemplate } from '../../templates/index.js';
import { parseEmailAddress } from '../email-address.js';
import { parseRule, type RuleGroup } from './rules.js';

/**
 * An automation's definition: trigger, steps, reentry. Validation reports every problem with
 * its path (`steps[2].then[0].templateId`), in the shape of segments' 422s. What needs the
 * database (templates, lists, the sender domain) is checked by automations.ts with the paths
 * collected here.
 */

export type SendStep = {
  type: 'send';
  templateId?: string;
  subject?: string;
  html?: string;
  text?: string;
  from: { email: string; name?: string };
  replyTo?: string;
};
export type WaitStep = { type: 'wait'; duration: string } | { type: 'wait'; until: { event: string; timeout: string } };
export type ConditionStep = { type: 'condition'; if: RuleGroup; then: Step[]; else: Step[] };
export type UpdateSubscriberStep = { type: 'update_subscriber'; lists?: { add?: string[]; remove?: string[] }; attributes?: Record<string, unknown> };
export type ExitStep = { type: 'exit' };
export type Step = SendStep | WaitStep | ConditionStep | UpdateSubscriberStep | ExitStep;

export const STEP_TYPES = ['send', 'wait', 'condition', 'update_subscriber', 'exit'] as const;
export const REENTRY = ['never', 'after_exit', 'always'] as const;
export type Reentry = (typeof REENTRY)[number];

export const AUTOMATION_LIMITS = {
  name: 200,
  steps: 100,
  depth: 5,
  maxWaitDays: 365,
  eventName: 100,
  subjectBytes: 998,
  bodyBytes: 512 * 1024,
  listsPerStep: 100,
  attributesBytes: 16 * 1024,
} as const;

const EVENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;
const DURATION = /^([1-9][0-9]{0,8})(s|m|h|d)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "30s" | "15m" | "3h" | "2d" → milliseconds; null when malformed or over 365 days. */
export function parseDuration(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = DURATION.exec(text);
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2]];
  return ms <= AUTOMATION_LIMITS.maxWaitDays * UNIT_MS.d ? ms : null;
}

export function checkEventName(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0 || name.length > AUTOMATION_LIMITS.eventName) return `must be 1 to ${AUTOMATION_LIMITS.eventName} characters`;
  return EVENT_NAME.test(name) ? null : 'must start with a letter or digit and hold only letters, digits and _ . : -';
}

/** References that need the database, with the path to name when they do not resolve. */
export interface References {
  templates: { path: string; id: string }[];
  lists: { path: string; id: string }[];
  senders: { path: string; email: string }[];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function unknownMembers(o: Record<string, unknown>, known: readonly string[], at: string, errors: FieldError[]): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) errors.push({ field: `${at}.${k}`, message: 'is not a known field' });
}

/**
 * The path of the first string holding NUL (U+0000) or a lone UTF-16 surrogate in a JSON
 * value, or null. PostgreSQL text and jsonb cannot store NUL, and a lone surrogate would be
 * stored as U+FFFD, silently changing the text: both are refused up front.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function unstorablePath(value: unknown, at: string, depth = 0): string | null {
  if (typeof value === 'string') return UNSTORABLE.test(value) ? at : null;
  if (depth > 64 || typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = unstorablePath(value[i], `${at}[${i}]`, depth + 1);
      if (p) return p;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    const p = UNSTORABLE.test(k) ? at || '(key)' : unstorablePath(v, at ? `${at}.${k}` : k, depth + 1);
    if (p) return p;
  }
  return null;
}

export function throwIfErrors(errors: FieldError[]): void {
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

/** Validates a step list (top level or a branch) and returns it normalised. */
export function parseSteps(raw: unknown, at: string, errors: FieldError[], refs: References, state = { count: 0 }, depth = 1): Step[] {
  if (!Array.isArray(raw)) {
    errors.push({ field: at, message: 'must be an array of steps' });
    return [];
  }
  if (depth === 1 && raw.length === 0) errors.push({ field: at, message: 'must hold at least one step' });
  if (depth > AUTOMATION_LIMITS.depth && raw.length > 0) {
    errors.push({ field: at, message: `conditions may be nested at most ${AUTOMATION_LIMITS.depth} deep` });
    return [];
  }
  const steps: Step[] = [];
  raw.forEach((s: unknown, i: number) => {
    const here = `${at}[${i}]`;
    state.count++;
    if (state.count === AUTOMATION_LIMITS.steps + 1) errors.push({ field: here, message: `an automation holds at most ${AUTOMATION_LIMITS.steps} steps in all` });
    const step = parseStep(s, here, errors, refs, state, depth);
    if (step) steps.push(step);
  });
  return steps;
}

function parseStep(s: unknown, at: string, errors: FieldError[], refs: References, state: { count: number }, depth: number): Step | null {
  if (!isObject(s)) {
    errors.push({ field: at, message: 'must be a step object with a type' });
    return null;
  }
  switch (s.type) {
    case 'send': return parseSend(s, at, errors, refs);
    case 'wait': return parseWait(s, at, errors);
    case 'condition': {
      unknownMembers(s, ['type', 'if', 'then', 'else'], at, errors);
      const rule = parseRule(s.if, `${at}.if`, errors);
      const then = parseSteps(s.then ?? [], `${at}.then`, errors, refs, state, depth + 1);
      const otherwise = parseSteps(s.else ?? [], `${at}.else`, errors, refs, state, depth + 1);
      return { type: 'condition', if: rule, then, else: otherwise };
    }
    case 'update_subscriber': return parseUpdate(s, at, errors, refs);
    case 'exit':
      unknownMembers(s, ['type'], at, errors);
      return { type: 'exit' };
    default:
      errors.push({ field: `${at}.type`, message: `unknown step type ${JSON.stringify(s.type ?? null)} (known: ${STEP_TYPES.join(', ')})` });
      return null;
  }
}

function checkPart(value: unknown, field: string, errors: FieldError[], maxBytes: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    errors.push({ field, message: 'must be a string' });
    return undefined;
  }
  if (Buffer.byteLength(value) > maxBytes) errors.push({ field, message: `must be at most ${maxBytes} bytes` });
  else {
    const err = checkTemplate(value);
    if (err) errors.push({ field, message: `template syntax error at line ${err.line}, column ${err.column}: ${err.message}` });
  }
  return value;
}

function parseSend(s: Record<string, unknown>, at: string, errors: FieldError[], refs: References): SendStep | null {
  const before = errors.length;
  unknownMembers(s, ['type', 'templateId', 'subject', 'html', 'text', 'from', 'replyTo'], at, errors);
  const subject = checkPart(s.subject, `${at}.subject`, errors, AUTOMATION_LIMITS.subjectBytes);
  if (subject !== undefined && /[\r\n]/.test(subject)) errors.push({ field: `${at}.subject`, message: 'must not contain CR or LF' });
  const html = checkPart(s.html, `${at}.html`, errors, AUTOMATION_LIMITS.bodyBytes);
  const text = checkPart(s.text, `${at}.text`, errors, AUTOMATION_LIMITS.bodyBytes);
  let templateId: string | undefined;
  if (s.templateId !== undefined) {
    if (typeof s.templateId !== 'string' || s.templateId.length === 0 || s.templateId.length > 200) errors.push({ field: `${at}.templateId`, message: 'must be a template id' });
    else {
      templateId = s.templateId;
      refs.templates.push({ path: `${at}.templateId`, id: templateId });
    }
  } else if (subject === undefined || (html === undefined && text === undefined)) {
    errors.push({ field: `${at}.templateId`, message: 'is required unless subject and html or text are given' });
  }
  let from: SendStep['from'] | undefined;
  if (!isObject(s.from) || typeof s.from.email !== 'string') errors.push({ field: `${at}.from.email`, message: 'is required' });
  else {
    unknownMembers(s.from, ['email', 'name'], `${at}.from`, errors);
    const parsed = parseEmailAddress(s.from.email);
    if (!parsed.ok) errors.push({ field: `${at}.from.email`, message: parsed.message });
    else refs.senders.push({ path: `${at}.from.email`, email: s.from.email });
    if (s.from.name !== undefined && (typeof s.from.name !== 'string' || s.from.name.length > 200 || /[\r\n]/.test(s.from.name))) {
      errors.push({ field: `${at}.from.name`, message: 'must be a string of at most 200 characters without CR or LF' });
    }
    from = { email: s.from.email, ...(typeof s.from.name === 'string' ? { name: s.from.name } : {}) };
  }
  if (s.replyTo !== undefined) {
    const parsed = typeof s.replyTo === 'string' ? parseEmailAddress(s.replyTo) : { ok: false as const, message: 'must be a string' };
    if (!parsed.ok) errors.push({ field: `${at}.replyTo`, message: parsed.message });
  }
  if (errors.length > before || !from) return null;
  return {
    type: 'send', from,
    ...(templateId !== undefined ? { templateId } : {}),
    ...(subject !== undefined ? { subject } : {}),
    ...(html !== undefined ? { html } : {}),
    ...(text !== undefined ? { text } : {}),
    ...(typeof s.replyTo === 'string' ? { replyTo: s.replyTo } : {}),
  };
}

const durationMessage = `must be a whole number with a unit s, m, h or d ("30s", "15m", "3h", "2d"), at most ${AUTOMATION_LIMITS.maxWaitDays} days`;

function parseWait(s: Record<string, unknown>, at: string, errors: FieldError[]): WaitStep | null {
  unknownMembers(s, ['type', 'duration', 'until'], at, errors);
  if ((s.duration === undefined) === (s.until === undefined)) {
    errors.push({ field: at, message: 'needs exactly one of duration or until' });
    return null;
  }
  if (s.duration !== undefined) {
    if (parseDuration(s.duration) === null) {
      errors.push({ field: `${at}.duration`, message: durationMessage });
      return null;
    }
    return { type: 'wait', duration: s.duration as string };
  }
  const u = s.until;
  if (!isObject(u)) {
    errors.push({ field: `${at}.until`, message: 'must be {event, timeout}' });
    return null;
  }
  const before = errors.length;
  unknownMembers(u, ['event', 'timeout'], `${at}.until`, errors);
  const eventProblem = checkEventName(u.event);
  if (eventProblem) errors.push({ field: `${at}.until.event`, message: eventProblem });
  if (parseDuration(u.timeout) === null) errors.push({ field: `${at}.until.timeout`, message: durationMessage });
  if (errors.length > before) return null;
  return { type: 'wait', until: { event: u.event as string, timeout: u.timeout as string } };
}

function parseUpdate(s: Record<string, unknown>, at: string, errors: FieldError[], refs: References): UpdateSubscriberStep | null {
  const before = errors.length;
  unknownMembers(s, ['type', 'lists', 'attributes'], at, errors);
  if (s.lists === undefined && s.attributes === undefined) errors.push({ field: at, message: 'needs lists or attributes' });
  const out: UpdateSubscriberStep = { type: 'update_subscriber' };
  if (s.lists !== undefined) {
    if (!isObject(s.lists)) errors.push({ field: `${at}.lists`, message: 'must be {add, remove}' });
    else {
      unknownMembers(s.lists, ['add', 'remove'], `${at}.lists`, errors);
      for (const side of ['add', 'remove'] as const) {
        const ids = s.lists[side];
        if (ids === undefined) continue;
        if (!Array.isArray(ids) || ids.length > AUTOMATION_LIMITS.listsPerStep || !ids.every((x) => typeof x === 'string' && x.length > 0 && x.length <= 200)) {
          errors.push({ field: `${at}.lists.${side}`, message: `must be an array of at most ${AUTOMATION_LIMITS.listsPerStep} list ids` });
          continue;
        }
        ids.forEach((id: string, j: number) => refs.lists.push({ path: `${at}.lists.${side}[${j}]`, id }));
        out.lists = { ...out.lists, [side]: ids };
      }
    }
  }
  if (s.attributes !== undefined) {
    if (!isObject(s.attributes)) errors.push({ field: `${at}.attributes`, message: 'must be a JSON object' });
    else if (Buffer.byteLength(JSON.stringify(s.attributes)) > AUTOMATION_LIMITS.attributesBytes) errors.push({ field: `${at}.attributes`, message: `must be at most ${AUTOMATION_LIMITS.attributesBytes} bytes as JSON` });
    else if (Object.keys(s.attributes).some((k) => k.length === 0 || k.length > 100)) errors.push({ field: `${at}.attributes`, message: 'keys must be 1 to 100 characters' });
    else out.attributes = s.attributes;
  }
  return errors.length > before ? null : out;
}

// ---------------------------------------------------------------------------------------
// Positions: a step's path in the tree, "2" or "3.then.0", as stored in automation_runs.

export type Position = (number | 'then' | 'else')[];

export function parsePosition(text: string): Position {
  return text === '' ? [] : text.split('.').map((p) => (p === 'then' || p === 'else' ? p : Number(p)));
}

export function formatPosition(p: Position): string {
  return p.join('.');
}

/** `steps[3].then[0]`: a position as the API names it. */
export function describePosition(p: Position): string {
  let out = 'steps';
  for (const part of p) out += typeof part === 'number' ? `[${part}]` : `.${part}`;
  return out;
}

/** The step at a position, or null past the end of its branch. */
export function stepAt(steps: Step[], p: Position): Step | null {
  let list = steps;
  let step: Step | null = null;
  for (let i = 0; i < p.length; i++) {
    const part = p[i];
    if (typeof part === 'number') {
      step = list[part] ?? null;
      if (!step) return null;
    } else {
      if (!step || step.type !== 'condition') return null;
      list = part === 'then' ? step.then : step.else;
      step = null;
    }
  }
  return step;
}

/**
 * The position after `p`: the next step in its branch, or, past the branch's end, the step
 * after the condition that holds it. null when the automation is complete.
 */
export function nextPosition(steps: Step[], p: Position): Position | null {
  let cur = [...p];
  for (;;) {
    const last = cur.length - 1;
    const candidate = [...cur.slice(0, last), (cur[last] as number) + 1];
    if (stepAt(steps, candidate)) return candidate;
    if (cur.length === 1) return null;
    cur = cur.slice(0, -2); // up to the condition step holding this branch
  }
}

/** The first step of a condition's branch, or what follows the condition if it is empty. */
export function enterBranch(steps: Step[], conditionAt: Position, branch: 'then' | 'else'): Position | null {
  const first = [...conditionAt, branch, 0];
  return stepAt(steps, first) ? first : nextPosition(steps, conditionAt);
}

/** Every send step's position (for the per-step counters). */
export function sendPositions(steps: Step[], at: Position = []): Position[] {
  const out: Position[] = [];
  steps.forEach((s, i) => {
    const here = [...at, i];
    if (s.type === 'send') out.push(here);
    if (s.type === 'condition') out.push(...sendPositions(s.then, [...here, 'then']), ...sendPositions(s.else, [...here, 'else']));
  });
  return out;
}
