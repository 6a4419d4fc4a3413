import type { FieldError } from '../errors.js';

/**
 * What every string the API accepts must be: text PostgreSQL can store and any client can read
 * back. NUL (U+0000) is refused by PostgreSQL's text and jsonb, and an unpaired UTF-16
 * surrogate (`"\ud800"` in JSON) has no UTF-8 encoding; either, reaching a statement, used to
 * fail it (and every request group-committed with it). The HTTP layer checks every
 * request's strings before validation (http/plugins/input-rule.ts); handlers that answer item by
 * item (batch send, imports) check their items with these functions themselves.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain the NUL character (U+0000)';
  if (LONE_SURROGATE.test(s)) return 'must not contain an unpaired UTF-16 surrogate (e.g. \\ud800)';
  return null;
}

/** "emails.3.html", "attributes.plan", "querystring.limit": the field names validation errors use. */
function join(path: string, key: string | number): string {
  return path === '' ? String(key) : `${path}.${key}`;
}

/**
 * Every string (and object key) in `value` that fails `textProblem`, and every number that is
 * not finite, with its field path.
 * Iterative, so no input can overflow the stack; `skip` names paths (as returned) whose
 * subtrees a handler checks itself, item by item. At most `max` problems are returned.
 */
export function findTextProblems(value: unknown, base = '', opts: { skip?: readonly string[]; max?: number } = {}): FieldError[] {
  const max = opts.max ?? 20;
  const skip = new Set(opts.skip ?? []);
  const out: FieldError[] = [];
  const stack: { v: unknown; path: string }[] = [{ v: value, path: base }];
  while (stack.length > 0 && out.length < max) {
    const { v, path } = stack.pop()!;
    if (skip.has(path)) continue;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) out.push({ field: path || 'body', message: problem });
    } else if (typeof v === 'number' && !Number.isFinite(v)) {
      // JSON.parse reads 1e309 as Infinity, and query coercion reads "Infinity" so.
      out.push({ field: path || 'body', message: 'must be a finite number' });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: join(path, i) });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const problem = textProblem(k);
        if (problem) out.push({ field: join(path, k.replace(/[\u0000\ud800-\udfff]/g, '\ufffd')), message: `key ${problem}` });
        else stack.push({ v: child, path: join(path, k) });
      }
    }
  }
  return out;
}

