import type { Queryable } from '../../db/pool.js';
import type { CampaignDefinitionRow } from '../../db/queries/campaigns/campaigns.js';
import { selectAbsentAttributeKeys } from '../../db/queries/campaigns/audience.js';
import { attributeKeys, fieldUses, missingAttributeWarnings, unknownSubscriberFields, type MergeWarning } from '../merge/checks.js';
import { audienceFilter } from './audience.js';
import type { CampaignContent } from './definition.js';

/** Names every campaign message has besides its `variables` (domain/merge/context.ts). */
const PROVIDED = new Set(['subscriber', 'email', 'unsubscribe_url']);

/**
 * A campaign's merge-field warnings, answered with a save: unknown `subscriber.` fields,
 * attributes that no subscriber of the audience has, and top-level names that are neither in
 * the campaign's variables nor provided for each recipient (and have no fallback).
 */
export async function campaignMergeWarnings(
  db: Queryable,
  accountId: string,
  d: Pick<CampaignDefinitionRow, 'audience' | 'variables'>,
  content: Pick<CampaignContent, 'subject' | 'html' | 'text'>,
  now: Date,
): Promise<MergeWarning[]> {
  const uses = fieldUses({ subject: content.subject, html: content.html, text: content.text });
  const unknown = unknownSubscriberFields(uses);
  const keys = attributeKeys(uses);
  const absent = keys.length === 0 ? new Set<string>() : await selectAbsentAttributeKeys(db, await audienceFilter(db, { account_id: accountId, audience: d.audience }, now), keys);
  const undefinedNames = uses
    .filter((u) => !PROVIDED.has(u.head) && !Object.prototype.hasOwnProperty.call(d.variables, u.head) && !u.hasFallback && u.kind === 'variable')
    .filter((u, i, all) => all.findIndex((o) => o.path === u.path) === i)
    .map((u) => ({ field: u.path, message: `(${u.part}) is not in the campaign's variables, nor a name every recipient has (subscriber.*, email, unsubscribe_url); it renders empty` }));
  return [...unknown, ...missingAttributeWarnings(uses, absent), ...undefinedNames];
}
