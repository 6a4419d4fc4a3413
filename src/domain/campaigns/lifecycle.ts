import type { Page } from '../../db/pagination.js';
import { notifySoon } from '../../db/notify.js';
import type { Pool, Queryable } from '../../db/pool.js';
import {
  definitionOf, deleteCampaignRow, deleteUnsentCampaignMessages, holdCampaignMessages, insertCampaign, lockCampaign, markCampaignSending,
  releaseCampaignMessages, selectCampaign, selectCampaignAccount, selectCampaignPage, setCampaignStatus, updateCampaignDefinition,
  type CampaignRow, type CampaignStatus,
} from '../../db/queries/campaigns/campaigns.js';
import { AppError, notFound } from '../../errors.js';
import { hasPrefix, newId } from '../../ids.js';
import { assertCampaignSendingAllowed } from '../stats/account-health.js';
import type { MergeWarning } from '../merge/checks.js';
import { countRecipients } from './audience.js';
import { assertNothingRendersEmpty, campaignMergeWarnings, checkCampaignMerge } from './merge-check.js';
import { checkDefinition, definitionRow, toDefinition, type CampaignDefinition, type CampaignInput } from './definition.js';

/**
 * The campaign's states (docs/campaigns.md#states):
 *   draft → scheduled → sending → sent;  sending ⇄ paused;
 *   draft, scheduled, sending, paused → cancelled.
 * Every change locks the campaign row first, so concurrent requests (two sends at once) are
 * decided one after the other: the second sees the first's state and gets invalid_state.
 */

export function invalidState(row: Pick<CampaignRow, 'id' | 'status'>, action: string): AppError {
  return new AppError('invalid_state', `campaign ${row.id} is ${row.status}: cannot ${action}`, { extra: { state: row.status } });
}

async function requireLocked(db: Queryable, accountId: string, id: string): Promise<CampaignRow> {
  const row = hasPrefix(id, 'cmp') ? await lockCampaign(db, accountId, id) : null;
  if (!row) throw notFound(`campaign ${id}`);
  return row;
}

export async function requireCampaign(db: Queryable, accountId: string, id: string): Promise<CampaignRow> {
  const row = hasPrefix(id, 'cmp') ? await selectCampaign(db, accountId, id) : null;
  if (!row) throw notFound(`campaign ${id}`);
  return row;
}

/** A saved definition and its merge-field warnings (merge-check.ts). */
export type SavedCampaign = CampaignDefinition & { warnings: MergeWarning[] };

export async function createCampaign(db: Queryable, accountId: string, input: CampaignInput, now: Date): Promise<SavedCampaign> {
  const d = definitionRow(input);
  const { content } = await checkDefinition(db, accountId, d, now);
  const warnings = await campaignMergeWarnings(db, accountId, d, content, now);
  return { ...toDefinition(await insertCampaign(db, newId('cmp'), accountId, d, now)), warnings };
}

export async function listCampaigns(db: Queryable, accountId: string, status: CampaignStatus | null, page: Page): Promise<CampaignRow[]> {
  return selectCampaignPage(db, accountId, status, page);
}

/** PATCH: the changes merged onto the stored definition, and the result validated as a whole. */
export async function updateCampaign(db: Queryable, accountId: string, id: string, changes: Partial<CampaignInput>, now: Date): Promise<SavedCampaign> {
  const row = await requireLocked(db, accountId, id);
  if (row.status !== 'draft' && row.status !== 'scheduled') throw invalidState(row, 'edit it');
  const current = toDefinition(row);
  const merged: CampaignInput = {
    name: changes.name ?? current.name,
    subject: changes.subject ?? current.subject ?? undefined,
    from: changes.from ?? { email: current.from.email, ...(current.from.name !== null ? { name: current.from.name } : {}) },
    replyTo: changes.replyTo !== undefined ? changes.replyTo : current.replyTo,
    html: changes.html !== undefined ? changes.html : current.html,
    text: changes.text !== undefined ? changes.text : current.text,
    templateId: changes.templateId !== undefined ? changes.templateId : current.templateId,
    variables: changes.variables ?? current.variables,
    audience: changes.audience ?? { lists: current.audience.lists, ...(current.audience.segment ? { segment: current.audience.segment } : {}), excludeLists: current.audience.excludeLists },
    tags: changes.tags ?? current.tags,
    headers: changes.headers ?? current.headers,
    scheduledAt: changes.scheduledAt !== undefined ? changes.scheduledAt : current.scheduledAt,
    throttle: changes.throttle !== undefined ? changes.throttle : current.throttle,
    strict: changes.strict ?? current.strict,
  };
  const d = definitionRow(merged);
  const { content } = await checkDefinition(db, accountId, d, now);
  const warnings = await campaignMergeWarnings(db, accountId, d, content, now);
  const updated = await updateCampaignDefinition(db, accountId, id, d, now);
  if (!updated) throw invalidState(row, 'edit it');
  return { ...toDefinition(updated), warnings };
}

export async function deleteCampaign(db: Queryable, accountId: string, id: string): Promise<void> {
  const row = await requireLocked(db, accountId, id);
  if (!(await deleteCampaignRow(db, accountId, id))) throw invalidState(row, 'delete it');
}

/**
 * POST /{id}/send: a draft becomes `scheduled` (scheduledAt in the future) or `sending`. The
 * definition is checked again (the domain may have lost verification, a list may be gone) and
 * the content frozen: a template's parts are copied into the campaign, so editing the template
 * later does not change a campaign under way. A `strict` campaign is refused (422
 * template_error) when a placeholder would render empty for its audience.
 */
export async function sendCampaign(db: Queryable, accountId: string, id: string, now: Date): Promise<{ id: string; status: 'scheduled' | 'sending' }> {
  const row = await requireLocked(db, accountId, id);
  if (row.status !== 'draft') throw invalidState(row, 'send it');
  await assertCampaignSendingAllowed(db, accountId, now);
  // scheduled_at was checked when it was written; a time that has passed since just means "now".
  const d = { ...definitionOf(row), scheduled_at: null };
  const { domain, content } = await checkDefinition(db, accountId, d, now);
  // A strict campaign is checked here, against the audience as it is now, for a scheduled send too.
  if (d.strict) assertNothingRendersEmpty(await checkCampaignMerge(db, accountId, d, content, now));
  const status = row.scheduled_at && row.scheduled_at.getTime() > now.getTime() ? 'scheduled' : 'sending';
  await markCampaignSending(db, row.id, { status, domainId: domain.id, ...content.sources }, now);
  await countRecipients(db, row, now, 1);
  return { id: row.id, status };
}

/** sending → paused: unsent messages are held at once; the fan-out stops at its next batch. */
export async function pauseCampaign(db: Queryable, accountId: string, id: string, now: Date, reason = 'paused by request'): Promise<CampaignRow> {
  const row = await requireLocked(db, accountId, id);
  if (row.status !== 'sending') throw invalidState(row, 'pause it');
  return pauseLocked(db, row, now, reason);
}

export async function pauseLocked(db: Queryable, row: CampaignRow, now: Date, reason: string): Promise<CampaignRow> {
  await holdCampaignMessages(db, row.id);
  return setCampaignStatus(db, row.id, 'paused', now, { pauseReason: reason });
}

/** Milliseconds between two messages under the campaign's throttle (0 = no throttle). */
export function throttleInterval(throttle: number | null): number {
  return throttle ? 60_000 / throttle : 0;
}

/** paused → sending: held messages are released, spaced by the throttle from now on. */
export async function resumeCampaign(db: Queryable, accountId: string, id: string, now: Date): Promise<CampaignRow> {
  const row = await requireLocked(db, accountId, id);
  if (row.status !== 'paused') throw invalidState(row, 'resume it');
  await assertCampaignSendingAllowed(db, accountId, now);
  const interval = throttleInterval(row.throttle);
  const released = await releaseCampaignMessages(db, row.id, now, interval);
  return setCampaignStatus(db, row.id, 'sending', now, { pauseReason: null, throttleNextAt: new Date(now.getTime() + released * interval) });
}

/** draft, scheduled, sending, paused → cancelled: unsent messages are removed and counted. */
export async function cancelCampaign(db: Queryable, accountId: string, id: string, now: Date): Promise<CampaignRow> {
  const row = await requireLocked(db, accountId, id);
  if (!['draft', 'scheduled', 'sending', 'paused'].includes(row.status)) throw invalidState(row, 'cancel it');
  const removed = await deleteUnsentCampaignMessages(db, row.id);
  return setCampaignStatus(db, row.id, 'cancelled', now, { finished: true, cancelledMore: removed });
}

/** The account a campaign belongs to (the CLI is given only the campaign id). */
export async function accountOfCampaign(db: Queryable, id: string): Promise<string> {
  const accountId = hasPrefix(id, 'cmp') ? await selectCampaignAccount(db, id) : null;
  if (!accountId) throw notFound(`campaign ${id}`);
  return accountId;
}

/** Wakes the campaign runner (workers/) after a send or resume committed. */
export function wakeCampaignRunner(pool: Pool): void {
  notifySoon(pool, 'postline_campaigns');
}
