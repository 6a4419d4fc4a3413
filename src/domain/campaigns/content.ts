import type { Queryable } from '../../db/pool.js';
import { selectCampaignContent } from '../../db/queries/campaigns/campaigns.js';
import type { MessageRow } from '../../db/queries/messages.js';
import { compileTemplate, renderTemplate, type Template } from '../../templates/index.js';
import type { TrackingLinks } from '../tracking/links.js';
import { mergeVariables, SAMPLE_SUBSCRIBER } from './definition.js';
import { BoundedMap } from '../../lib/bounded-map.js';

interface CompiledCampaign {
  html: Template | null;
  text: Template | null;
  variables: Record<string, unknown>;
  headers: Record<string, string>;
}

const CACHE_SIZE = 100;

/**
 * Delivery-time rendering of campaign messages. A campaign message row holds its recipient and
 * merge data but no content; the campaign's single stored copy is parsed once per process (the
 * content is frozen when the campaign is sent, so the cache never goes stale) and rendered per
 * recipient here, right before the engine builds, tracks and signs the message.
 */
export class CampaignRenderer {
  private readonly cache = new BoundedMap<string, CompiledCampaign>(CACHE_SIZE);

  constructor(
    private readonly db: Queryable,
    private readonly links: TrackingLinks,
  ) {}

  /** The row with html, text and headers filled in; other messages are returned unchanged. */
  async render(msg: MessageRow, domain: string, trackingHost: string | null): Promise<MessageRow> {
    if (!msg.campaign_id || !msg.merge_data) return msg;
    const c = await this.load(msg.campaign_id);
    const vars = mergeVariables(c.variables, msg.merge_data.subscriber ?? SAMPLE_SUBSCRIBER, this.links.unsubscribe(msg.id, trackingHost));
    return {
      ...msg,
      html: c.html && renderTemplate(c.html, vars, 'html'),
      text: c.text && renderTemplate(c.text, vars, 'text'),
      headers: { ...marketingHeaders(msg.campaign_id, msg.account_id, domain), ...c.headers, ...msg.headers },
    };
  }

  private async load(id: string): Promise<CompiledCampaign> {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const row = await selectCampaignContent(this.db, id);
    if (!row) throw new Error(`campaign ${id} no longer exists`);
    const compiled = {
      html: row.html === null ? null : compileTemplate(row.html),
      text: row.text === null ? null : compileTemplate(row.text),
      variables: row.variables,
      headers: row.headers,
    };
    this.cache.set(id, compiled);
    return compiled;
  }
}

/**
 * Headers bulk mail carries besides List-Unsubscribe (added for every message): List-Id
 * (RFC 2919) so mailbox filters can recognise the campaign stream, Precedence: bulk so
 * auto-responders stay quiet (RFC 3834), and Feedback-ID, which Gmail's feedback loop reports
 * complaint rates by (campaign:account:type:sender).
 */
export function marketingHeaders(campaignId: string, accountId: string, domain: string): Record<string, string> {
  return {
    'List-Id': `<${campaignId}.campaigns.${domain}>`,
    Precedence: 'bulk',
    'Feedback-ID': `${campaignId}:${accountId}:campaign:postline`,
  };
}
