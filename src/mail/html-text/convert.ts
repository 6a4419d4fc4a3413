/**
 * html-to-text with the options of every derived text part: links kept as "text [url]",
 * images (the pixel) dropped, lines wrapped at 78. Compiled once: `convert(html, options)`
 * compiles its selectors on every call, a quarter of its cost per message (bench/build.ts).
 * The reference that ./blocks.ts is proven equal to, and the path for what it does not cover.
 */
import { compile } from 'html-to-text';

export const convertHtml: (html: string) => string = compile({
  wordwrap: 78,
  selectors: [
    { selector: 'img', format: 'skip' },
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
  ],
});
