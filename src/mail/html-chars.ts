/**
 * Character codes and classes of htmlparser2's tokenizer in HTML mode, shared by the two narrow
 * readers that follow its rules (link-sites/narrow.ts, html-text/blocks.ts).
 */
export const TAB = 9;
export const LF = 10;
export const FF = 12;
export const CR = 13;
export const SPACE = 32;
export const BANG = 33;
export const DQUOTE = 34;
export const SQUOTE = 39;
export const DASH = 45;
export const SLASH = 47;
export const EQ = 61;
export const GT = 62;
export const QUESTION = 63;
export const LBRACKET = 91;

export function isWhitespace(c: number): boolean {
  return c === SPACE || c === LF || c === TAB || c === FF || c === CR;
}

/** Whitespace, "/" or ">": what ends a tag name, an attribute name. */
export function endsName(c: number): boolean {
  return c === SLASH || c === GT || isWhitespace(c);
}

export function isAsciiAlpha(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90);
}
