import type { Template } from './ast.js';
import { compileTemplate } from './index.js';

/**
 * Parsed templates by source, for callers that see the same source again and again (the
 * send API: an integration posts the same html with new variables on every request, and
 * parsing a 4 KB template costs as much as rendering it; bench/accept). A Template is
 * immutable, so one parse serves every render. Bounded by the characters of source held
 * (`maxChars`); a source longer than `maxEntryChars` is parsed each time and not kept. The
 * oldest entry goes first; a hit makes its entry the newest. Sources that do not parse are
 * never kept: compileTemplate throws each time.
 */
export class TemplateCache {
  private readonly entries = new Map<string, Template>();
  private chars = 0;

  constructor(private readonly limits: { maxChars: number; maxEntryChars: number }) {}

  compile(source: string): Template {
    const hit = this.entries.get(source);
    if (hit) {
      this.entries.delete(source);
      this.entries.set(source, hit);
      return hit;
    }
    const template = compileTemplate(source);
    if (source.length > this.limits.maxEntryChars) return template;
    this.entries.set(source, template);
    this.chars += source.length;
    for (const oldest of this.entries.keys()) {
      if (this.chars <= this.limits.maxChars) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
    return template;
  }

  get size(): number {
    return this.entries.size;
  }
}
