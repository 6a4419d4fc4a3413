/** The nesting a JSON body may have: segment groups need ~13, merge variables a few more. */
export const MAX_JSON_DEPTH = 32;

/**
 * How deep JSON text nests, counted on the bytes before parsing (a 100,000-deep array
 * overflows the parser's stack). Stops counting as soon as `limit` is passed.
 */
export function jsonDepthExceeds(body: Buffer, limit: number): boolean {
  if (atMostOpeningBrackets(body, limit)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/**
 * Whether the text holds at most `limit` `[` and `{` bytes, in strings or not: then it cannot
 * nest deeper than `limit`. Counted with Buffer#indexOf (native), so a body with few brackets
 * (a send's 4 KB HTML) skips the byte-by-byte walk above (~11 µs for 4.5 KB on this machine).
 */
function atMostOpeningBrackets(body: Buffer, limit: number): boolean {
  let n = 0;
  for (const bracket of [0x5b, 0x7b]) {
    for (let i = body.indexOf(bracket); i >= 0; i = body.indexOf(bracket, i + 1)) {
      if (++n > limit) return false;
    }
  }
  return true;
}

/**
 * Whether the percent-escapes of a raw query string decode to UTF-8 text. A lone `%` not
 * followed by two hex digits is taken literally (as the query parser does); `%FF` or an
 * encoded surrogate (`%ED%A0%80`) is not text.
 */
export function queryIsUtf8(rawQuery: string): boolean {
  if (!rawQuery.includes('%')) return true;
  try {
    decodeURIComponent(rawQuery.replace(/%(?![0-9a-fA-F]{2})/g, '%25').replaceAll('+', ' '));
    return true;
  } catch {
    return false;
  }
}
