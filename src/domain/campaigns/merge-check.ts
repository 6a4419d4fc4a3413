import type { Queryable } from '../../db/pool.js';
import type { CampaignDefinitionRow } from '../../db/queries/campaigns/campaigns.js';
import { selectAbsentAttributeKeys } from '../../db/queries/campaigns/audience.js';
import { AppError } from '../../errors.js';
import { attributeKeys, fieldUses, missingAttributeWarnings, unknownSubscriberFields, type MergeWarning } from '../merge/checks.js';
import { audienceFilter } from './audience.js';
import type { CampaignContent } from './definition.js';

/** Names every campaign message has besides its `variables` (domain/merge/context.ts). */
const PROVIDED = new Set(['subscriber', 'email', 'unsubscribe_url']);

export interface CampaignMergeCheck {
  /** Every finding, answered as `warnings` with a save. */
  warnings: MergeWarning[];
  /** The placeholders among them that print nothing for the audience and have no fallback: what a strict campaign refuses to send. */
  empty: MergeWarning[];
}

/**
 * A campaign's merge-field checks: unknown `subscriber.` fields, attributes that no subscriber
 * of the audience has, and top-level names that are neither in the campaign's variables nor
 * provided for each recipient (and have no fallback).
 */
export async function checkCampaignMerge(
  db: Queryable,
  accountId: string,
  d: Pick<CampaignDefinitionRow, 'audience' | 'variables'>,
  content: Pick<CampaignContent, 'subject' | 'html' | 'text'>,
  now: Date,
): Promise<CampaignMergeCheck> {
  const uses = fieldUses({ subject: content.subject, html: content.html, text: content.text });
  const keys = attributeKeys(uses);
  const absent = keys.length === 0 ? new Set<string>() : await selectAbsentAttributeKeys(db, await audienceFilter(db, { account_id: accountId, audience: d.audience }, now), keys);
  const undefinedNames = uses
    .filter((u) => !PROVIDED.has(u.head) && !Object.prototype.hasOwnProperty.call(d.variables, u.head) && !u.hasFallback && u.kind === 'variable')
    .filter((u, i, all) => all.findIndex((o) => o.path === u.path) === i)
    .map((u) => ({ field: u.path, message: `(${u.part}) is not in the campaign's variables, nor a name every recipient has (subscriber.*, email, unsubscribe_url); it renders empty` }));
  // A placeholder prints nothing when its value is missing or an object; a fallback then prints
  // instead, and a loop over nothing is simply no output, so only bare placeholders count.
  const bare = uses.filter((u) => u.kind === 'variable' && !u.hasFallback);
  const empty = [...unknownSubscriberFields(bare), ...missingAttributeWarnings(bare, absent), ...undefinedNames]
    .filter((w, i, all) => all.findIndex((o) => o.field === w.field) === i);
  return { warnings: [...unknownSubscriberFields(uses), ...missingAttributeWarnings(uses, absent), ...undefinedNames], empty };
}

/** The warnings alone (a save or a preview answers them). */
export async function campaignMergeWarnings(...args: Parameters<typeof checkCampaignMerge>): Promise<MergeWarning[]> {
  return (await checkCampaignMerge(...args)).warnings;
}

/**
 * A strict campaign's send: refused with the send's strict 422 (`template_error`, one entry of
 * `errors` per placeholder) when a placeholder would render empty for the audience.
 */
export function assertNothingRendersEmpty(check: CampaignMergeCheck): void {
  const { empty } = check;
  if (empty.length === 0) return;
  throw new AppError(
    'template_error',
    `${empty.map((w) => `{{ ${w.field} }}`).join(', ')} ${empty.length === 1 ? 'has' : 'have'} no value and no fallback for the audience (strict campaign)`,
    { errors: empty },
  );
}
