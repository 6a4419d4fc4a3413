/**
 * Source → Template AST, in one left-to-right pass. Text runs until `{{`, `[for ` or
 * `[/for]`; everything else (a lone `}}`, other brackets) is literal text. Open loops live on
 * a stack so an unclosed `[for]` can be reported at its own position.
 */
import type { ParseResult, Template, TemplateNode } from './ast.js';
import { positionAt } from './position.js';
import { Scanner, SyntaxFailure, describe, isQuote, isSpace } from './scanner.js';

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const PIPE = 0x7c;

interface OpenLoop {
  start: number;
  header: string;
  body: TemplateNode[];
}

export function parseTemplate(source: string): ParseResult {
  try {
    return { ok: true, template: new Parser(source).parseDocument() };
  } catch (err) {
    if (!(err instanceof SyntaxFailure)) throw err;
    const { line, column } = positionAt(source, err.offset);
    return { ok: false, error: { message: err.message, line, column } };
  }
}

class Parser {
  private readonly s: Scanner;
  private readonly root: TemplateNode[] = [];
  private readonly open: OpenLoop[] = [];
  /** Where the pending text run started. */
  private textStart = 0;

  constructor(private readonly source: string) {
    this.s = new Scanner(source);
  }

  parseDocument(): Template {
    const { s } = this;
    while (!s.atEnd) {
      const c = s.code();
      if (c === OPEN_BRACE && s.code(s.pos + 1) === OPEN_BRACE) {
        this.flushText();
        this.parseTag();
      } else if (c === OPEN_BRACKET && s.startsWith('[/for]')) {
        this.flushText();
        this.closeLoop();
      } else if (c === OPEN_BRACKET && s.startsWith('[for') && isSpace(s.code(s.pos + 4))) {
        this.flushText();
        this.openLoop();
      } else {
        s.pos++;
        continue;
      }
      this.textStart = s.pos;
    }
    this.flushText();
    const unclosed = this.open.at(-1);
    if (unclosed) s.fail(unclosed.start, `unclosed loop: "${unclosed.header}" has no matching "[/for]"`);
    return { nodes: this.root };
  }

  /** The node list currently being filled: the innermost open loop's body, or the root. */
  private get body(): TemplateNode[] {
    return this.open.at(-1)?.body ?? this.root;
  }

  private flushText(): void {
    if (this.s.pos > this.textStart) {
      this.body.push({ kind: 'text', value: this.source.slice(this.textStart, this.s.pos) });
    }
  }

  /** `{{ path }}`, `{{ path | fallback }}`, or `{{ "literal" }}` (how to write a literal `{{`). */
  private parseTag(): void {
    const { s } = this;
    const open = s.pos;
    s.pos += 2;
    s.skipSpace();
    if (isQuote(s.code())) {
      const value = s.readQuoted();
      this.expectTagClose(open);
      if (value !== '') this.body.push({ kind: 'text', value });
      return;
    }
    if (s.atEnd) this.failUnclosedTag(open);
    if (s.startsWith('}}') || s.code() === PIPE) s.fail(s.pos, 'empty variable name');
    const { head, rest } = s.readPath('variable name');
    s.skipSpace();
    let fallback: string | null = null;
    if (s.code() === PIPE) {
      s.pos++;
      s.skipSpace();
      fallback = isQuote(s.code()) ? s.readQuoted() : this.readBareFallback(open);
    }
    this.expectTagClose(open);
    this.body.push({ kind: 'variable', head, rest, fallback });
  }

  /** Bare fallback: everything up to `}}`, trimmed. A `{{` inside means a tag was left open. */
  private readBareFallback(open: number): string {
    const { s } = this;
    const start = s.pos;
    while (!s.startsWith('}}')) {
      if (s.atEnd) this.failUnclosedTag(open);
      if (s.startsWith('{{')) this.failUnclosedTag(open);
      s.pos++;
    }
    const value = this.source.slice(start, s.pos).trim();
    if (value === '') s.fail(s.pos, 'expected a fallback after "|"');
    return value;
  }

  private expectTagClose(open: number): void {
    const { s } = this;
    s.skipSpace();
    if (s.startsWith('}}')) {
      s.pos += 2;
      return;
    }
    // EOF, another `{{` or a single `}`: the tag was never closed.
    if (s.atEnd || s.code() === OPEN_BRACE || s.code() === CLOSE_BRACE) this.failUnclosedTag(open);
    s.fail(s.pos, `unexpected ${describe(this.source, s.pos)} in tag: expected "}}"`);
  }

  private failUnclosedTag(open: number): never {
    return this.s.fail(open, 'unbalanced braces: "{{" is never closed by "}}"');
  }

  /** `[for name in path]`: pushes an open loop whose body collects the following nodes. */
  private openLoop(): void {
    const { s } = this;
    const start = s.pos;
    s.pos += 4;
    s.skipSpace();
    const first = s.code();
    const variable = s.readName();
    if (variable === '') {
      if (first === CLOSE_BRACKET || s.atEnd) this.failHeader(start, 'expected a loop variable');
      s.fail(s.pos, 'bad loop header: the loop variable must start with a letter or "_"');
    }
    const afterVariable = s.pos;
    s.skipSpace();
    const afterIn = s.pos + 2;
    const inFollows =
      s.startsWith('in') && (afterIn === this.source.length || isSpace(s.code(afterIn)) || s.code(afterIn) === CLOSE_BRACKET);
    if (s.pos === afterVariable || !inFollows) this.failHeader(start, 'expected "in" after the loop variable');
    s.pos += 2;
    s.skipSpace();
    if (s.code() === CLOSE_BRACKET || s.atEnd) this.failHeader(start, 'expected a path after "in"');
    const { head, rest } = s.readPath('path after "in"');
    s.skipSpace();
    if (s.code() !== CLOSE_BRACKET) this.failHeader(start, 'expected "]" to end the loop header');
    s.pos++;
    const body: TemplateNode[] = [];
    this.body.push({ kind: 'loop', variable, head, rest, body });
    const path = [head, ...rest].join('.');
    this.open.push({ start, header: `[for ${variable} in ${path}]`, body });
  }

  /** Header errors point at the offending character; running out of input points at `[for`. */
  private failHeader(start: number, message: string): never {
    const { s } = this;
    if (s.atEnd) return s.fail(start, 'bad loop header: "[for" is never closed by "]"');
    return s.fail(s.pos, `bad loop header: ${message}, found ${describe(this.source, s.pos)}`);
  }

  private closeLoop(): void {
    const { s } = this;
    if (this.open.length === 0) s.fail(s.pos, 'stray "[/for]": no "[for]" is open');
    this.open.pop();
    s.pos += '[/for]'.length;
  }
}
