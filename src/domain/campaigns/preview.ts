import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import { definitionOf } from '../../db/queries/campaigns/campaigns.js';
import { countAudience } from '../../db/queries/campaigns/fanout.js';
import { renderTemplate } from '../../templates/index.js';
import type { MergeWarning } from '../merge/checks.js';
import { emptyFieldWarning } from '../merge/checks.js';
import { previewSubscriber } from '../audience/subscribers.js';
import { audienceFilter } from './audience.js';
import { checkDefinition, mergeVariables } from './definition.js';
import { requireCampaign } from './lifecycle.js';
import { campaignMergeWarnings } from './merge-check.js';
import { sampleSubscriber } from './test-send.js';

export interface CampaignPreview {
  subscriber: { id: string; email: string; name: string | null };
  subject: string;
  html: string | null;
  text: string | null;
  /** Who a send now would reach: active, not suppressed, once each (`subscribers` counts every member). */
  audience: { recipients: number; subscribers: number };
  warnings: MergeWarning[];
}

/**
 * What the campaign's message looks like for one subscriber (the chosen one, else the first
 * active member of the audience) and how many people a send would reach now: the draft's
 * review before sending. Rendered exactly as delivery renders it (content.ts), stored nowhere.
 */
export async function previewCampaign(db: Queryable, config: Config, accountId: string, id: string, subscriberId: string | undefined, now: Date): Promise<CampaignPreview> {
  const row = await requireCampaign(db, accountId, id);
  const d = definitionOf(row);
  const { content } = await checkDefinition(db, accountId, { ...d, scheduled_at: null }, now);
  const chosen = subscriberId === undefined ? await sampleSubscriber(db, row, now) : await previewSubscriber(db, accountId, subscriberId);
  const vars = mergeVariables(d.variables, chosen, `${config.baseUrl}/u/preview`);
  const empty = new Set<string>();
  const onEmpty = (path: string) => void empty.add(path);
  const [size, warnings] = await Promise.all([
    countAudience(db, await audienceFilter(db, row, now), 1),
    campaignMergeWarnings(db, accountId, d, content, now),
  ]);
  const subject = renderTemplate(content.subject, vars, 'subject', onEmpty);
  const html = content.html && renderTemplate(content.html, vars, 'html', onEmpty);
  const text = content.text && renderTemplate(content.text, vars, 'text', onEmpty);
  const named = new Set(warnings.map((w) => w.field));
  return {
    subscriber: { id: chosen.id, email: chosen.email, name: chosen.name },
    subject,
    html,
    text,
    audience: { recipients: size.eligible, subscribers: size.total },
    warnings: [...warnings, ...[...empty].filter((p) => !named.has(p)).map(emptyFieldWarning)],
  };
}
