/**
 * The character-level reader under the parser: whitespace, names, dotted paths and quoted
 * strings. Hand-written over char codes (no regexes) so every failure knows its offset.
 */

/** Thrown inside the parser only; parseTemplate turns it into a TemplateError value. */
export class SyntaxFailure extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

export interface Path {
  head: string;
  rest: string[];
}

const DOT = 0x2e;
const BACKSLASH = 0x5c;

export function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** A name may start with a letter or `_`; path segments after a dot may also start with a digit (`items.0`). */
function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;
}

export function isQuote(c: number): boolean {
  return c === 0x22 || c === 0x27;
}

/** Describes the character at an offset for messages: `"x"`, or "end of template". */
export function describe(source: string, offset: number): string {
  if (offset >= source.length) return 'end of template';
  const ch = String.fromCodePoint(source.codePointAt(offset) ?? 0);
  if (ch === '\n' || ch === '\r') return 'a line break';
  return JSON.stringify(ch);
}

export class Scanner {
  pos = 0;

  constructor(readonly source: string) {}

  get atEnd(): boolean {
    return this.pos >= this.source.length;
  }

  code(offset = this.pos): number {
    return this.source.charCodeAt(offset);
  }

  startsWith(text: string): boolean {
    return this.source.startsWith(text, this.pos);
  }

  fail(offset: number, message: string): never {
    throw new SyntaxFailure(offset, message);
  }

  skipSpace(): void {
    while (this.pos < this.source.length && isSpace(this.code())) this.pos++;
  }

  /** Reads `[A-Za-z_][A-Za-z0-9_-]*`, or returns '' when no name starts here. */
  readName(): string {
    const start = this.pos;
    if (!isNameStart(this.code())) return '';
    this.pos++;
    while (isNameChar(this.code())) this.pos++;
    return this.source.slice(start, this.pos);
  }

  /**
   * Reads `name(.segment)*`. `what` names the missing thing for the empty case ("variable
   * name", "path after 'in'"); malformed paths (`a..b`, `a.`, `.a`, `1x`) fail at the offending
   * character.
   */
  readPath(what: string): Path {
    const first = this.code();
    const head = this.readName();
    if (head === '') {
      if (first === DOT) this.fail(this.pos, `bad path: a path cannot start with "."`);
      if (isNameChar(first)) this.fail(this.pos, `bad path: a name must start with a letter or "_"`);
      this.fail(this.pos, `expected a ${what}, found ${describe(this.source, this.pos)}`);
    }
    const rest: string[] = [];
    while (this.code() === DOT) {
      this.pos++;
      const start = this.pos;
      while (isNameChar(this.code())) this.pos++;
      if (start === this.pos) this.fail(this.pos, `bad path: expected a name after ".", found ${describe(this.source, this.pos)}`);
      rest.push(this.source.slice(start, this.pos));
    }
    return { head, rest };
  }

  /**
   * Reads a single- or double-quoted string at pos. A backslash escapes the quote or another
   * backslash; any other backslash is kept as is (so Windows paths and `\n` stay literal).
   */
  readQuoted(): string {
    const open = this.pos;
    const quote = this.code();
    this.pos++;
    let value = '';
    let chunk = this.pos;
    while (this.pos < this.source.length) {
      const c = this.code();
      if (c === quote) {
        value += this.source.slice(chunk, this.pos);
        this.pos++;
        return value;
      }
      const next = this.code(this.pos + 1);
      if (c === BACKSLASH && (next === quote || next === BACKSLASH)) {
        value += this.source.slice(chunk, this.pos);
        chunk = this.pos + 1; // keep the escaped character, drop the backslash
        this.pos += 2;
        continue;
      }
      this.pos++;
    }
    return this.fail(open, `unterminated string: the opening ${quote === 0x22 ? 'double' : 'single'} quote is never closed`);
  }
}
