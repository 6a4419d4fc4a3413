/** What parsePlainJson answers for a text it leaves to the library parser. */
export const NOT_PLAIN: unique symbol = Symbol('not plain JSON');

/**
 * A JSON body parsed as Fastify's default parser would parse it, for the texts where that parser
 * is JSON.parse and two regular-expression scans of the whole text that cannot match:
 * secure-json-parse refuses a key `__proto__` (and `constructor`) by searching the text for
 * `"__proto__"` followed by a colon, where each letter may also be written as a \u escape. A
 * text holding no `\u` at all and neither `"__proto__"` nor `"constructor"` cannot match, and
 * the parser then returns JSON.parse's value unchanged; a substring search is several times
 * cheaper than those patterns on a 4 KB body. Everything else — a text with an escape or
 * one of those words, a byte order mark, an empty or invalid text — answers NOT_PLAIN and goes
 * to the library, which keeps its own errors. test/hardening/json-body.test.ts compares the two
 * over generated bodies.
 */
export function parsePlainJson(text: string): unknown {
  if (text.length === 0 || text.charCodeAt(0) === 0xfeff) return NOT_PLAIN;
  if (text.includes('\\u') || text.includes('"__proto__"') || text.includes('"constructor"')) return NOT_PLAIN;
  try {
    return JSON.parse(text);
  } catch {
    return NOT_PLAIN;
  }
}
