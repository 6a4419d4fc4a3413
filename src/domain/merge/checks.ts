/**
 * Checks of `{{ … }}` against the merge context (context.ts), so a misspelt field is named
 * when the template is saved rather than rendering empty in a customer's inbox. Warnings, not
 * errors: a template may be saved before the data it needs exists.
 */
import type { FieldError } from '../../errors.js';
import { fieldsOf, type FieldUse, type Template } from '../../templates/index.js';
import { SUBSCRIBER_FIELDS } from './context.js';

export type MergeWarning = FieldError;

const KNOWN = new Set<string>(SUBSCRIBER_FIELDS);

/** Field uses of every present part, tagged with the part they are in. */
export function fieldUses(parts: Record<string, Template | null>): (FieldUse & { part: string })[] {
  return Object.entries(parts).flatMap(([part, t]) => (t === null ? [] : fieldsOf(t).map((u) => ({ ...u, part }))));
}

/** `{{ subscriber.x }}` where x is not a subscriber field, or a subscriber object printed whole. */
export function unknownSubscriberFields(uses: readonly (FieldUse & { part: string })[]): MergeWarning[] {
  const out: MergeWarning[] = [];
  const seen = new Set<string>();
  for (const u of uses) {
    if (u.head !== 'subscriber' || seen.has(u.path)) continue;
    seen.add(u.path);
    const [field, ...below] = u.rest;
    let message: string | null = null;
    if (field === undefined) message = u.kind === 'loop' ? null : 'is the whole subscriber; name a field: subscriber.name, subscriber.email, subscriber.attributes.<key>…';
    else if (!KNOWN.has(field)) message = `is not a subscriber field; the fields are ${SUBSCRIBER_FIELDS.map((f) => `subscriber.${f}`).join(', ')}${suggestion(field)}`;
    else if (field === 'attributes' && below.length === 0 && u.kind === 'variable') message = 'prints nothing; name an attribute: subscriber.attributes.<key>';
    if (message) out.push({ field: u.path, message: `(${u.part}) ${message}` });
  }
  return out;
}

/** The `subscriber.attributes.<key>` keys the parts use (each once). */
export function attributeKeys(uses: readonly FieldUse[]): string[] {
  const keys = uses.filter((u) => u.head === 'subscriber' && u.rest[0] === 'attributes' && u.rest.length >= 2).map((u) => u.rest[1]);
  return [...new Set(keys)];
}

/** Warnings for attribute keys that no subscriber of the audience has. */
export function missingAttributeWarnings(uses: readonly (FieldUse & { part: string })[], absent: ReadonlySet<string>): MergeWarning[] {
  const out: MergeWarning[] = [];
  const seen = new Set<string>();
  for (const u of uses) {
    if (u.head !== 'subscriber' || u.rest[0] !== 'attributes' || u.rest.length < 2 || !absent.has(u.rest[1]) || seen.has(u.path)) continue;
    seen.add(u.path);
    const then = u.hasFallback ? 'every recipient gets the fallback' : 'it renders empty for every recipient';
    out.push({ field: u.path, message: `(${u.part}) no subscriber of the audience has the attribute "${u.rest[1]}"; ${then}` });
  }
  return out;
}

/** The warning for a placeholder that rendered empty and had no fallback. */
export function emptyFieldWarning(path: string): MergeWarning {
  return { field: path, message: `has no value and no fallback, so it renders empty; give it a value or write {{ ${path} | fallback }}` };
}

/** A likely meant field for a near miss ("nmae" → name). */
function suggestion(field: string): string {
  const lower = field.toLowerCase();
  const near = SUBSCRIBER_FIELDS.find((f) => f === lower || editDistance(f, lower) <= 2);
  return near ? ` (did you mean subscriber.${near}?)` : '';
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}
