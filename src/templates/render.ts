/**
 * Template AST + variables → string. A plain recursive walk pushing strings into one array;
 * values are only ever output, never parsed, so a value like `{{x}}` stays literal.
 */
import { AppError } from '../errors.js';
import type { RenderContext, Template, TemplateNode, TemplateVariables } from './ast.js';
import { escapeHtml } from './escape.js';

/**
 * What one render may cost. Nested loops multiply: a 60 KB template looping 1,000 × 1,000
 * times would build gigabytes, and a loop over a million items with an empty body spins
 * without output. Output is capped in characters (the send path's own 2 MB byte limit comes
 * after); work in nodes visited plus loop iterations, which bounds time without a clock.
 */
export const RENDER_LIMITS = { outputChars: 4 * 1024 * 1024, steps: 1_000_000 } as const;

interface Budget {
  chars: number;
  steps: number;
  /** Rides along with the budget: both are per render and reach every nested call. */
  onEmpty: OnEmptyField | undefined;
}

function spend(budget: Budget, chars: number): void {
  budget.chars += chars;
  if (++budget.steps > RENDER_LIMITS.steps) {
    throw new AppError('template_error', `Rendering takes more than ${RENDER_LIMITS.steps} steps (loops nested over too many items)`, { extra: { limit: 'steps' } });
  }
  if (budget.chars > RENDER_LIMITS.outputChars) {
    throw new AppError('template_error', `Rendered output exceeds ${RENDER_LIMITS.outputChars} characters`, { extra: { limit: 'output' } });
  }
}

/**
 * One enclosing loop. Frames form a chain from the innermost loop outwards; lookups walk it,
 * so inner loop variables shadow outer ones and the root variables come last.
 */
interface Frame {
  readonly name: string;
  value: unknown;
  /** 0-based position of the current item; exposed to templates as 1-based `loop.index`. */
  index: number;
  readonly parent: Frame | null;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * Told of each `{{ path }}` that printed nothing and had no fallback (its dotted path, once per
 * occurrence): the send path turns these into warnings, or into a 422 when the send is strict.
 */
export type OnEmptyField = (path: string) => void;

export function renderTemplate(template: Template, variables: TemplateVariables, context: RenderContext, onEmpty?: OnEmptyField): string {
  const out: string[] = [];
  renderNodes(template.nodes, variables, null, context === 'html', out, { chars: 0, steps: 0, onEmpty });
  const result = out.join('');
  return context === 'subject' ? foldLineBreaks(result) : result;
}

function renderNodes(
  nodes: readonly TemplateNode[],
  root: TemplateVariables,
  frame: Frame | null,
  html: boolean,
  out: string[],
  budget: Budget,
): void {
  for (const node of nodes) {
    switch (node.kind) {
      case 'text':
        spend(budget, node.value.length);
        out.push(node.value);
        break;
      case 'variable': {
        const text = printable(lookup(root, frame, node.head, node.rest));
        if (text === '' && node.fallback === null && budget.onEmpty) budget.onEmpty([node.head, ...node.rest].join('.'));
        // The fallback is the author's own text, like the text around the tag: not escaped.
        const piece = text === '' ? (node.fallback ?? '') : html ? escapeHtml(text) : text;
        spend(budget, piece.length);
        out.push(piece);
        break;
      }
      case 'loop': {
        const items = lookup(root, frame, node.head, node.rest);
        if (!Array.isArray(items) || items.length === 0) break;
        // One frame per loop, updated per item: nothing renders asynchronously or keeps it.
        const inner: Frame = { name: node.variable, value: undefined, index: 0, parent: frame };
        for (let i = 0; i < items.length; i++) {
          spend(budget, 0);
          inner.value = items[i];
          inner.index = i;
          renderNodes(node.body, root, inner, html, out, budget);
        }
        break;
      }
    }
  }
}

/**
 * Resolves a path: loop variables (innermost first), then `loop` for the innermost loop's
 * metadata, then the root variables. Only own properties are followed, so `constructor` or
 * `__proto__` never reach into prototypes.
 */
function lookup(root: TemplateVariables, frame: Frame | null, head: string, rest: readonly string[]): unknown {
  let value: unknown;
  let f = frame;
  while (f !== null && f.name !== head) f = f.parent;
  if (f !== null) value = f.value;
  else if (head === 'loop' && frame !== null) value = { index: frame.index + 1 };
  else if (hasOwn.call(root, head)) value = root[head];
  else return undefined;
  for (const key of rest) {
    if (value === null || typeof value !== 'object' || !hasOwn.call(value, key)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/**
 * What a value prints as. Strings as is; numbers, bigints and booleans as String() gives them;
 * everything else (null, undefined, objects, arrays, functions) prints nothing, which is also
 * what triggers a fallback.
 */
function printable(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      return '';
  }
}

/** A subject is a header: each CRLF, CR or LF becomes one space (no header injection). */
function foldLineBreaks(text: string): string {
  return text.replace(/\r\n|\r|\n/g, ' ');
}
