/**
 * html-to-text with the options of every derived text part: links kept as "text [url]",
 * images (the pixel) dropped, lines wrapped at 78. Compiled once: `convert(html, options)`
 * compiles its selectors on every call, a quarter of its cost per message (bench/build.ts).
 * Compiled at the first conversion, not when the module loads: the compilation (selderee's
 * decision tree) was ~25 ms of every worker's start, and the blockwise path (./blocks.ts)
 * converts most documents without it (docs/decisions/0049-start-up-cpu.md).
 * The reference that ./blocks.ts is proven equal to, and the path for what it does not cover.
 */
import { compile } from 'html-to-text';

let compiled: ((html: string) => string) | undefined;

export function convertHtml(html: string): string {
  compiled ??= compile({
    wordwrap: 78,
    selectors: [
      { selector: 'img', format: 'skip' },
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ],
  });
  return compiled(html);
}
