/** The nesting a JSON body may have: segment groups need ~13, merge variables a few more. */
export const MAX_JSON_DEPTH = 32;

/**
 * How deep JSON text nests, counted on the bytes before parsing (a 100,000-deep array
 * overflows the parser's stack). Stops counting as soon as `limit` is passed.
 */
export function jsonDepthExceeds(body: Buffer, limit: number): boolean {
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
