/**
 * The template AST and the values the parser returns (docs/templates.md).
 * A parsed Template is immutable: parse once, cache it, render it per recipient.
 */

/** Literal template text, emitted verbatim (never escaped: the author wrote it). */
export interface TextNode {
  readonly kind: 'text';
  readonly value: string;
}

/** `{{ head.rest… | fallback }}`. The path is pre-split so rendering does no string work. */
export interface VariableNode {
  readonly kind: 'variable';
  readonly head: string;
  readonly rest: readonly string[];
  /** Author text used when the value prints nothing; null when the tag has no `|`. */
  readonly fallback: string | null;
}

/** `[for variable in head.rest…] body [/for]`. */
export interface LoopNode {
  readonly kind: 'loop';
  readonly variable: string;
  readonly head: string;
  readonly rest: readonly string[];
  readonly body: readonly TemplateNode[];
}

export type TemplateNode = TextNode | VariableNode | LoopNode;

export interface Template {
  readonly nodes: readonly TemplateNode[];
}

/** A syntax error as a value. line and column are 1-based; columns count characters. */
export interface TemplateError {
  readonly message: string;
  readonly line: number;
  readonly column: number;
}

export type ParseResult =
  | { readonly ok: true; readonly template: Template }
  | { readonly ok: false; readonly error: TemplateError };

/** `html` escapes values; `text` does not; `subject` does not and folds CR/LF into spaces. */
export type RenderContext = 'html' | 'text' | 'subject';

/** The merge data for one render: the top-level names a template may refer to. */
export type TemplateVariables = Readonly<Record<string, unknown>>;
