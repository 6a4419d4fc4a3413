import { notifySoon } from '../../db/notify.js';
import type { Pool, Queryable } from '../../db/pool.js';
import type { CampaignRow } from '../../db/queries/campaigns/campaigns.js';
import { selectRecipientBatch } from '../../db/queries/campaigns/fanout.js';
import { sendEmail, type SendContext, type SendResult } from '../sending/sending.js';
import { mergeVariables, SAMPLE_SUBSCRIBER } from './definition.js';
import { audienceFilter } from './audience.js';

export const TEST_SEND_MAX = 5;

/**
 * POST /{id}/test: rendered copies of the campaign to up to 5 addresses, as transactional
 * messages (subject prefixed "[Test]"), merged with a sample subscriber — the first active
 * member of the audience, or a stand-in when it has none. They go through POST /emails'
 * pipeline: same checks, quota, suppression; a test key stores and sends nothing. They are not
 * campaign messages and count nowhere in the campaign's report.
 */
export async function sendCampaignTest(ctx: SendContext, c: CampaignRow, to: string[]): Promise<{ sample: { email: string; id: string }; results: SendResult[] }> {
  const sample = await sampleSubscriber(ctx.db, c, ctx.now);
  const results: SendResult[] = [];
  for (const address of to) {
    results.push(
      await sendEmail(ctx, {
        to: address,
        from: { email: c.from_email, ...(c.from_name !== null ? { name: c.from_name } : {}) },
        ...(c.subject !== null ? { subject: `[Test] ${c.subject}` } : {}),
        ...(c.html !== null ? { html: c.html } : {}),
        ...(c.text !== null ? { text: c.text } : {}),
        ...(c.template_id !== null ? { templateId: c.template_id } : {}),
        ...(c.reply_to !== null ? { replyTo: c.reply_to } : {}),
        variables: mergeVariables(c.variables, sample, '') as Record<string, unknown>,
        headers: c.headers,
        tags: [...c.tags, 'campaign-test'].slice(0, 20),
      }),
    );
  }
  return { sample: { email: sample.email, id: sample.id }, results };
}

/** The first active member of the audience, or a stand-in when it has none. */
export async function sampleSubscriber(db: Queryable, c: CampaignRow, now: Date) {
  const [first] = await selectRecipientBatch(db, await audienceFilter(db, c, now), c.audience.lists, '', null, 1);
  if (first && first.status === 'active') return { id: first.id, email: first.email, name: first.name, attributes: first.attributes };
  return SAMPLE_SUBSCRIBER;
}

/** Wakes delivery and the webhook dispatcher after test sends that queued live messages. */
export function wakeAfterTestSend(pool: Pool): void {
  notifySoon(pool, 'postline_messages');
  notifySoon(pool, 'postline_events');
}
