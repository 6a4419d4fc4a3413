/**
 * The merge fields a parsed template refers to, found without rendering: what save-time checks
 * compare against the merge context (domain/merge/). Loop variables and `loop.index` are the
 * template's own names, so uses of them are left out; a loop's source path is a use.
 */
import type { Template, TemplateNode } from './ast.js';

export interface FieldUse {
  /** The dotted path as written, e.g. `subscriber.attributes.plan`. */
  readonly path: string;
  readonly head: string;
  readonly rest: readonly string[];
  /** `{{ x | fallback }}`: the author said what to print when x has no value. */
  readonly hasFallback: boolean;
  readonly kind: 'variable' | 'loop';
}

/** Found once per Template (they are immutable): a cached template is asked on every send. */
const found = new WeakMap<Template, readonly FieldUse[]>();

/** Each distinct field use of the template, in source order (first occurrence wins). */
export function fieldsOf(template: Template): readonly FieldUse[] {
  let uses = found.get(template);
  if (!uses) {
    const out = new Map<string, FieldUse>();
    walk(template.nodes, new Set(), out);
    uses = Object.freeze([...out.values()]);
    found.set(template, uses);
  }
  return uses;
}

function walk(nodes: readonly TemplateNode[], local: ReadonlySet<string>, out: Map<string, FieldUse>): void {
  for (const node of nodes) {
    if (node.kind === 'text') continue;
    if (!local.has(node.head) && !(node.head === 'loop' && local.size > 0)) {
      const path = [node.head, ...node.rest].join('.');
      const hasFallback = node.kind === 'variable' && node.fallback !== null;
      const key = `${node.kind}:${path}:${hasFallback}`;
      if (!out.has(key)) out.set(key, { path, head: node.head, rest: node.rest, hasFallback, kind: node.kind });
    }
    if (node.kind === 'loop') walk(node.body, new Set([...local, node.variable]), out);
  }
}
