import type { Queryable } from '../../db/pool.js';
import type { CampaignRow } from '../../db/queries/campaigns/campaigns.js';
import { countAudience, setAudienceSize, type AudienceFilter } from '../../db/queries/campaigns/fanout.js';
import { selectSegment } from '../../db/queries/segments.js';
import { compileSegment, parseSegmentDefinition, SqlParams } from '../audience/segment-sql.js';

/** The audience as SQL over `subscribers s`: in a list, not in an excluded list, in the segment. */
export async function audienceFilter(db: Queryable, c: Pick<CampaignRow, 'account_id' | 'audience'>, now: Date): Promise<AudienceFilter> {
  const p = new SqlParams([c.account_id]);
  const parts = [
    `EXISTS (SELECT 1 FROM subscriber_lists sl WHERE sl.subscriber_id = s.id AND sl.list_id = ANY(${p.add(c.audience.lists, 'text[]')}))`,
  ];
  if (c.audience.excludeLists && c.audience.excludeLists.length > 0) {
    parts.push(`NOT EXISTS (SELECT 1 FROM subscriber_lists sx WHERE sx.subscriber_id = s.id AND sx.list_id = ANY(${p.add(c.audience.excludeLists, 'text[]')}))`);
  }
  if (c.audience.segment) {
    const seg = await selectSegment(db, c.account_id, c.audience.segment);
    // A segment deleted after the send matches nobody rather than everybody.
    parts.push(seg ? compileSegment(parseSegmentDefinition({ match: seg.match, conditions: seg.conditions }), p, now) : 'FALSE');
  }
  return { where: parts.join(' AND '), params: p.values };
}


/**
 * Counts the recipients (active, not suppressed) once, for progress before the fan-out ends,
 * and returns the subscriber ids that split the audience into `parts` ranges of equal size.
 */
export async function countRecipients(db: Queryable, c: Pick<CampaignRow, 'id' | 'account_id' | 'audience'>, now: Date, parts: number): Promise<{ eligible: number; bounds: string[] }> {
  const size = await countAudience(db, await audienceFilter(db, c, now), parts);
  await setAudienceSize(db, c.id, size.eligible);
  return { eligible: size.eligible, bounds: size.bounds };
}
