import { finishPage, type Page } from '../db/pagination.js';
import type { Queryable } from '../db/pool.js';
import {
  deleteTemplate as deleteTemplateRow, insertTemplate, selectFolderCounts, selectTemplate, selectTemplatePage,
  updateTemplate as updateTemplateRow, type TemplatePatch, type TemplateRow, type TemplateSummaryRow,
} from '../db/queries/templates.js';
import { AppError, notFound, type FieldError } from '../errors.js';
import { hasPrefix, newId } from '../ids.js';
import { parseTemplate, renderTemplate, templateAppError, type Template, type TemplateVariables } from '../templates/index.js';
import { emptyFieldWarning, fieldUses, unknownSubscriberFields, type MergeWarning } from './merge/checks.js';
import { mergeSendVariables, type MergeSubscriber } from './merge/context.js';

/**
 * Stored templates (the library users pick from when sending). Every part is template-language
 * source (docs/templates.md), parsed on every save so a broken template is refused at once,
 * and parsed again at send time because the language may grow stricter.
 */

/** Sizes refused with 422; documented in docs/templates-api.md. */
export const TEMPLATE_LIMITS = {
  /** Characters (Unicode code points), after trimming. */
  name: 200,
  folder: 200,
  /** UTF-8 bytes: RFC 5322's line limit; a subject is one header line. */
  subjectBytes: 998,
  /** UTF-8 bytes of each of html and text: 2 MiB. */
  bodyBytes: 2 * 1024 * 1024,
} as const;

export interface TemplateSummary {
  id: string;
  name: string;
  folder: string | null;
  subject: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface StoredTemplate extends TemplateSummary {
  html: string | null;
  text: string | null;
}

export interface TemplateInput {
  name: string;
  folder?: string | null;
  subject?: string | null;
  html?: string | null;
  text?: string | null;
}

export type TemplateChanges = Partial<TemplateInput>;

export type TemplatePart = 'subject' | 'html' | 'text';
const PARTS: readonly TemplatePart[] = ['subject', 'html', 'text'];

/** Parsed parts of a stored template, ready to render per recipient; null = part absent. */
export interface CompiledTemplate {
  id: string;
  name: string;
  subject: Template | null;
  html: Template | null;
  text: Template | null;
}

export interface RenderedTemplate {
  subject: string | null;
  html: string | null;
  text: string | null;
}

function toSummary(r: TemplateSummaryRow): TemplateSummary {
  return {
    id: r.id,
    name: r.name,
    folder: r.folder,
    subject: r.subject,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function toTemplate(r: TemplateRow): StoredTemplate {
  return { ...toSummary(r), html: r.html, text: r.text };
}

const chars = (s: string) => [...s].length;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * Checks and normalises the given fields (absent ones are left out): name trimmed and
 * non-empty, folder trimmed with '' meaning "no folder", sizes within TEMPLATE_LIMITS. All
 * size problems are reported together; then the first syntax error, as `template_error`
 * with `field`, `line` and `column`.
 */
function normalise(input: TemplateChanges): TemplatePatch {
  const errors: FieldError[] = [];
  const out: TemplatePatch = {};
  if (input.name !== undefined) {
    out.name = input.name.trim();
    if (out.name === '') errors.push({ field: 'name', message: 'must not be empty' });
    else if (chars(out.name) > TEMPLATE_LIMITS.name) errors.push({ field: 'name', message: `must be at most ${TEMPLATE_LIMITS.name} characters` });
  }
  if (input.folder !== undefined) {
    out.folder = input.folder === null || input.folder.trim() === '' ? null : input.folder.trim();
    if (out.folder !== null && chars(out.folder) > TEMPLATE_LIMITS.folder) {
      errors.push({ field: 'folder', message: `must be at most ${TEMPLATE_LIMITS.folder} characters` });
    }
  }
  for (const part of PARTS) {
    const value = input[part];
    if (value === undefined) continue;
    out[part] = value;
    const limit = part === 'subject' ? TEMPLATE_LIMITS.subjectBytes : TEMPLATE_LIMITS.bodyBytes;
    if (value !== null && bytes(value) > limit) errors.push({ field: part, message: `must be at most ${limit} bytes (UTF-8)` });
  }
  if (errors.length > 0) {
    throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
  }
  for (const part of PARTS) {
    const source = out[part];
    if (typeof source === 'string') compilePart(part, source);
  }
  return out;
}

/** Parses one part, or throws template_error naming the part and the position. */
function compilePart(part: TemplatePart, source: string): Template {
  const result = parseTemplate(source);
  if (result.ok) return result.template;
  const err = templateAppError(result.error);
  throw new AppError('template_error', `${part}: ${err.message}`, { extra: { field: part, ...err.extra } });
}

export async function createTemplate(db: Queryable, accountId: string, input: TemplateInput, now: Date = new Date()): Promise<StoredTemplate> {
  const t = normalise(input);
  const row = await insertTemplate(db, {
    id: newId('tpl'),
    accountId,
    name: t.name as string,
    folder: t.folder ?? null,
    subject: t.subject ?? null,
    html: t.html ?? null,
    text: t.text ?? null,
    now,
  });
  return toTemplate(row);
}

/** The account's template, or not_found (also for another account's id). */
export async function getTemplate(db: Queryable, accountId: string, id: string): Promise<StoredTemplate> {
  const row = hasPrefix(id, 'tpl') ? await selectTemplate(db, accountId, id) : null;
  if (!row) throw notFound(`template ${id}`);
  return toTemplate(row);
}

/**
 * `folder`: undefined = any folder, null = templates in no folder, a name = that folder.
 * `q`: case-insensitive substring of the name.
 */
export async function listTemplates(
  db: Queryable,
  accountId: string,
  filter: { folder?: string | null; q?: string },
  page: Page,
): Promise<{ data: TemplateSummary[]; nextCursor: string | null }> {
  const q = filter.q?.trim() ? filter.q.trim() : null;
  const folder = filter.folder === undefined || filter.folder === null ? null : filter.folder.trim() || null;
  const rows = await selectTemplatePage(db, accountId, { folderSet: filter.folder !== undefined, folder, q }, page);
  const result = finishPage(rows, page, (r) => r.id);
  return { data: result.data.map(toSummary), nextCursor: result.nextCursor };
}

export async function updateTemplate(
  db: Queryable,
  accountId: string,
  id: string,
  changes: TemplateChanges,
  now: Date = new Date(),
): Promise<StoredTemplate> {
  if (!hasPrefix(id, 'tpl')) throw notFound(`template ${id}`);
  const row = await updateTemplateRow(db, accountId, id, normalise(changes), now);
  if (!row) throw notFound(`template ${id}`);
  return toTemplate(row);
}

export async function deleteTemplate(db: Queryable, accountId: string, id: string): Promise<void> {
  if (!hasPrefix(id, 'tpl') || !(await deleteTemplateRow(db, accountId, id))) throw notFound(`template ${id}`);
}

/** Folder names with how many templates each holds; `folder: null` counts the unfiled ones. */
export async function templateFolders(db: Queryable, accountId: string): Promise<{ folder: string | null; count: number }[]> {
  return selectFolderCounts(db, accountId);
}

/** Parses every part of a stored template; a syntax error is template_error with the part. */
export function compileStoredTemplate(t: StoredTemplate): CompiledTemplate {
  const compile = (part: TemplatePart) => (t[part] === null ? null : compilePart(part, t[part]));
  return { id: t.id, name: t.name, subject: compile('subject'), html: compile('html'), text: compile('text') };
}

/**
 * For POST /emails: the account's template parsed and ready to render. An unknown id (or
 * another account's) is `template_error` "unknown template", as docs/architecture.md#api-conventions lists it, not
 * not_found: the request is fine, the template reference in it is not.
 */
export async function requireTemplateForSend(db: Queryable, accountId: string, id: string): Promise<CompiledTemplate> {
  const row = hasPrefix(id, 'tpl') ? await selectTemplate(db, accountId, id) : null;
  if (!row) {
    throw new AppError('template_error', `unknown template ${id}`, { errors: [{ field: 'templateId', message: 'is not a template of this account' }] });
  }
  return compileStoredTemplate(toTemplate(row));
}

/**
 * Renders each present part in its context (html escapes values; subject never breaks a line).
 * `onEmpty` hears of every placeholder that printed nothing and had no fallback.
 */
export function renderCompiledTemplate(
  t: Pick<CompiledTemplate, TemplatePart>,
  variables: TemplateVariables,
  onEmpty?: (path: string) => void,
): RenderedTemplate {
  return {
    subject: t.subject && renderTemplate(t.subject, variables, 'subject', onEmpty),
    html: t.html && renderTemplate(t.html, variables, 'html', onEmpty),
    text: t.text && renderTemplate(t.text, variables, 'text', onEmpty),
  };
}

/** What a save answers besides the template: `{{ subscriber.… }}` fields the merge context lacks. */
export function templateWarnings(t: Pick<StoredTemplate, TemplatePart>): MergeWarning[] {
  const c = compileStoredTemplate({ id: '', name: '', folder: null, createdAt: '', updatedAt: '', ...t });
  return unknownSubscriberFields(fieldUses({ subject: c.subject, html: c.html, text: c.text }));
}

/** Collects empty-placeholder warnings during a render, each path once. */
export function emptyFieldCollector(): { onEmpty: (path: string) => void; warnings: () => MergeWarning[] } {
  const paths = new Set<string>();
  return { onEmpty: (path) => void paths.add(path), warnings: () => [...paths].map(emptyFieldWarning) };
}

/**
 * The preview: what a message from this template would contain, rendered with the merge context
 * a send builds (domain/merge/context.ts) — for `subscriber`, as that subscriber would get it.
 * `warnings` names the template's unknown subscriber fields and the placeholders that rendered
 * empty without a fallback.
 */
export async function previewTemplate(
  db: Queryable,
  accountId: string,
  id: string,
  variables: TemplateVariables,
  draft: Partial<Record<TemplatePart, string | null>> = {},
  opts: { subscriber?: MergeSubscriber | null; unsubscribeUrl?: string } = {},
): Promise<RenderedTemplate & { warnings: MergeWarning[] }> {
  const stored = await getTemplate(db, accountId, id);
  // Unsaved parts (the editor's live preview) pass the same size and syntax checks as a save.
  const parts = normalise({ subject: draft.subject, html: draft.html, text: draft.text });
  const subscriber = opts.subscriber ?? null;
  const context = subscriber
    ? mergeSendVariables(variables, subscriber.email, subscriber, opts.unsubscribeUrl ?? '')
    : { ...variables, unsubscribe_url: opts.unsubscribeUrl ?? '' };
  const compiled = compileStoredTemplate({ ...stored, ...parts });
  const empty = emptyFieldCollector();
  const rendered = renderCompiledTemplate(compiled, context, empty.onEmpty);
  return { ...rendered, warnings: [...unknownSubscriberFields(fieldUses({ subject: compiled.subject, html: compiled.html, text: compiled.text })), ...empty.warnings()] };
}
