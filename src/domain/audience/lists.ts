import { type Page } from '../../db/pagination.js';
import type { Queryable } from '../../db/pool.js';
import {
  deleteList as deleteListRow, insertList, selectList, selectListAccount, selectListFlags, selectListPage, updateList as updateListRow,
  type ListPatch, type ListRow,
} from '../../db/queries/lists.js';
import { selectTemplate } from '../../db/queries/templates.js';
import { AppError, invalid, notFound, type FieldError } from '../../errors.js';
import { newId } from '../../ids.js';

/**
 * Lists: named groups of subscribers. A subscriber may be in many lists; deleting a list
 * removes its memberships only. `doubleOptIn` makes new members `unconfirmed` until they
 * follow the signed link of a confirmation mail (domain/audience/double-opt-in.ts).
 */

export const LIST_LIMITS = { name: 200, description: 2000 } as const;

export interface List {
  id: string;
  name: string;
  description: string | null;
  doubleOptIn: boolean;
  /** Template used for the confirmation mail instead of the built-in one; null = built-in. */
  confirmationTemplateId: string | null;
  /** Members of the list, whatever their status. */
  subscriberCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface ListInput {
  name: string;
  description?: string | null;
  doubleOptIn?: boolean;
  confirmationTemplateId?: string | null;
}

export function toList(r: ListRow): List {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    doubleOptIn: r.double_opt_in,
    confirmationTemplateId: r.confirmation_template_id,
    subscriberCount: r.subscriber_count,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

function checkFields(input: Partial<ListInput>): FieldError[] {
  const errors: FieldError[] = [];
  if (input.name !== undefined) {
    const n = input.name.trim().length;
    if (n === 0 || n > LIST_LIMITS.name) errors.push({ field: 'name', message: `must be 1 to ${LIST_LIMITS.name} characters` });
  }
  if (typeof input.description === 'string' && input.description.length > LIST_LIMITS.description) {
    errors.push({ field: 'description', message: `must be at most ${LIST_LIMITS.description} characters` });
  }
  return errors;
}

function throwIfAny(errors: FieldError[]): void {
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

/**
 * A confirmation template must be one of this account's: another
 * account's id is refused like an unknown one, 422, never stored as a reference.
 */
async function checkTemplateReference(db: Queryable, accountId: string, templateId: string | null | undefined): Promise<void> {
  if (templateId === undefined || templateId === null) return;
  if (!(await selectTemplate(db, accountId, templateId))) throw invalid('confirmationTemplateId', `unknown template ${templateId}`);
}

export async function createList(db: Queryable, accountId: string, input: ListInput, now: Date = new Date()): Promise<List> {
  throwIfAny(checkFields(input));
  await checkTemplateReference(db, accountId, input.confirmationTemplateId);
  const row = await insertList(db, {
    id: newId('lst'),
    accountId,
    name: input.name.trim(),
    description: input.description ?? null,
    doubleOptIn: input.doubleOptIn ?? false,
    confirmationTemplateId: input.confirmationTemplateId ?? null,
    now,
  });
  return toList(row);
}

export async function getList(db: Queryable, accountId: string, id: string): Promise<List> {
  const row = await selectList(db, accountId, id);
  if (!row) throw notFound(`list ${id}`);
  return toList(row);
}

/** limit + 1 lists from the page's position; the HTTP layer trims and makes the cursor. */
export async function listLists(db: Queryable, accountId: string, page: Page): Promise<List[]> {
  return (await selectListPage(db, accountId, page)).map(toList);
}

export async function updateList(db: Queryable, accountId: string, id: string, changes: Partial<ListInput>, now: Date = new Date()): Promise<List> {
  throwIfAny(checkFields(changes));
  await checkTemplateReference(db, accountId, changes.confirmationTemplateId);
  const patch: ListPatch = { ...changes, ...(changes.name !== undefined ? { name: changes.name.trim() } : {}) };
  const row = await updateListRow(db, accountId, id, patch, now);
  if (!row) throw notFound(`list ${id}`);
  return toList(row);
}

export async function deleteList(db: Queryable, accountId: string, id: string): Promise<void> {
  if (!(await deleteListRow(db, accountId, id))) throw notFound(`list ${id}`);
}

/**
 * Checks that every id names a list of this account; returns the ids of those with double
 * opt-in. `field` names the request field in the 422 (e.g. "list", "addLists").
 */
export async function requireLists(db: Queryable, accountId: string, ids: string[], field: string): Promise<{ doubleOptIn: Set<string> }> {
  const unique = [...new Set(ids)];
  const found = await selectListFlags(db, accountId, unique);
  const known = new Set(found.map((r) => r.id));
  const missing = unique.filter((id) => !known.has(id));
  if (missing.length > 0) throw invalid(field, `unknown list ${missing.join(', ')}`);
  return { doubleOptIn: new Set(found.filter((r) => r.double_opt_in).map((r) => r.id)) };
}

/** The account a list belongs to (operator tools that are given only a list id). */
export async function accountOfList(db: Queryable, listId: string): Promise<string> {
  const accountId = await selectListAccount(db, listId);
  if (!accountId) throw notFound(`list ${listId}`);
  return accountId;
}
