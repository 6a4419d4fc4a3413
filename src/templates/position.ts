/**
 * Offset → 1-based line and column. Computed only when reporting an error, so the parser
 * tracks a plain offset and never pays for line bookkeeping on valid templates.
 */
export interface Position {
  line: number;
  column: number;
}

/**
 * Columns count characters (code points), as editors do, not UTF-16 units. Line breaks are
 * LF, CRLF (one break) and a lone CR.
 */
export function positionAt(source: string, offset: number): Position {
  let line = 1;
  let column = 1;
  for (let i = 0; i < offset && i < source.length; i++) {
    const c = source.charCodeAt(i);
    if (c === 0x0a) {
      line++;
      column = 1;
    } else if (c === 0x0d) {
      // CR before LF: let the LF count the break.
      if (source.charCodeAt(i + 1) !== 0x0a) {
        line++;
        column = 1;
      }
    } else {
      const isPair = c >= 0xd800 && c <= 0xdbff && i + 1 < offset && isLowSurrogate(source.charCodeAt(i + 1));
      if (isPair) i++;
      column++;
    }
  }
  return { line, column };
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
