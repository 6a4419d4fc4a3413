/**
 * The template language's public surface (docs/templates.md). parseTemplate returns errors as
 * values; compileTemplate is the throwing form for code paths that answer with an AppError
 * (template creation, send time).
 */
import { AppError } from '../errors.js';
import type { Template, TemplateError } from './ast.js';
import { parseTemplate } from './parse.js';

export type {
  LoopNode,
  ParseResult,
  RenderContext,
  Template,
  TemplateError,
  TemplateNode,
  TemplateVariables,
  TextNode,
  VariableNode,
} from './ast.js';
export { escapeHtml } from './escape.js';
export { parseTemplate } from './parse.js';
export { renderTemplate, type OnEmptyField } from './render.js';
export { fieldsOf, type FieldUse } from './fields.js';

/** The first syntax error in a template, or null when it parses. */
export function checkTemplate(source: string): TemplateError | null {
  const result = parseTemplate(source);
  return result.ok ? null : result.error;
}

/**
 * Parses or throws `template_error` with `{ line, column }` in `extra` (for the problem body).
 * The returned Template is immutable: cache it and render it for every recipient.
 */
export function compileTemplate(source: string): Template {
  const result = parseTemplate(source);
  if (!result.ok) throw templateAppError(result.error);
  return result.template;
}

export function templateAppError(error: TemplateError): AppError {
  const { message, line, column } = error;
  return new AppError('template_error', `${message} (line ${line}, column ${column})`, { extra: { line, column } });
}
