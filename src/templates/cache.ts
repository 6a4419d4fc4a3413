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
/** How many of the last distinct sources are compared before the Map is asked. */
const RECENT = 4;

export class TemplateCache {
  private readonly entries = new Map<string, Template>();
  private chars = 0;
  /**
   * Kept sources recently asked for, oldest first. Looking a fresh 4 KB string up in the Map
   * hashes all of it (~7 µs here); comparing it with a kept string is a memcmp. So the sources
   * of the last few calls (one integration's subject, html and text) are compared first, and
   * a hit is moved to the newest place through the kept string, whose hash V8 already has.
   */
  private recent: { source: string; template: Template }[] = [];

  constructor(private readonly limits: { maxChars: number; maxEntryChars: number }) {}

  compile(source: string): Template {
    for (const r of this.recent) {
      if (r.source === source && this.entries.has(r.source)) return this.hit(r.source, r.template);
    }
    const hit = this.entries.get(source);
    if (hit) return this.hit(source, hit);
    const template = compileTemplate(source);
    if (source.length > this.limits.maxEntryChars) return template;
    this.entries.set(source, template);
    this.chars += source.length;
    for (const oldest of this.entries.keys()) {
      if (this.chars <= this.limits.maxChars) break;
      this.entries.delete(oldest);
      this.chars -= oldest.length;
    }
    this.remember(source, template);
    return template;
  }

  /** A hit becomes the newest entry (eviction goes oldest first). */
  private hit(kept: string, template: Template): Template {
    this.entries.delete(kept);
    this.entries.set(kept, template);
    this.remember(kept, template);
    return template;
  }

  private remember(kept: string, template: Template): void {
    const known = this.recent.find((r) => r.source === kept);
    if (known) {
      known.template = template; // a source dropped and parsed again: its new parse
      return;
    }
    this.recent.push({ source: kept, template });
    if (this.recent.length > RECENT) this.recent.shift();
  }

  get size(): number {
    return this.entries.size;
  }
}
