import type { Config } from '../../config.js';
import type { PoolClient } from '../../db/pool.js';
import { selectFirstVerifiedDomain } from '../../db/queries/domains.js';
import { AppError } from '../../errors.js';
import { markConfirmationsSent, pendingConfirmations } from './double-opt-in.js';
import { sendEmail } from '../sending/sending.js';
import type { TrackingLinks } from '../tracking/links.js';

/** The built-in confirmation mail; a list's `confirmationTemplateId` replaces it. */
const BUILT_IN = {
  subject: 'Please confirm your subscription to {{ list_name }}',
  html:
    '<html><body style="font-family:sans-serif;line-height:1.5">' +
    '<p>Hi {{ name | there }},</p>' +
    '<p>Please confirm that you want to receive emails from <b>{{ list_name }}</b> at {{ email }}.</p>' +
    '<p><a href="{{ confirm_url }}" data-postline-notrack style="display:inline-block;padding:10px 18px;background:#111827;color:#fff;border-radius:6px;text-decoration:none">Confirm subscription</a></p>' +
    '<p style="color:#6b7280;font-size:13px">If you did not ask for this, ignore this email: you will not be subscribed.</p>' +
    '</body></html>',
  text: 'Hi {{ name | there }},\n\nPlease confirm that you want to receive emails from {{ list_name }} at {{ email }}:\n{{ confirm_url }}\n\nIf you did not ask for this, ignore this email.\n',
};

export interface ConfirmationMailDeps {
  config: Config;
  links: TrackingLinks;
  now: Date;
}

/**
 * Drains the double opt-in outbox through the normal sending pipeline, in the caller's
 * transaction: each pending row becomes a queued message (so it is signed, tracked, retried
 * and bounced like any other) and is closed with that message's id. The sender is
 * `no-reply@` the account's oldest verified domain, named after the list. A row that cannot
 * be sent (no verified domain yet) stays pending; one that can never be sent (suppressed
 * address, broken template) is closed without a message, so it doesn't retry forever.
 * Returns how many messages were queued.
 */
export async function sendConfirmationMails(tx: PoolClient, deps: ConfirmationMailDeps, limit = 100): Promise<number> {
  const pending = await pendingConfirmations(tx, { secret: deps.config.secret, baseUrl: deps.config.baseUrl }, limit, deps.now);
  const closed: { id: number; messageId: string | null }[] = [];
  const senders = new Map<string, string | null>();
  for (const p of pending) {
    if (!senders.has(p.accountId)) senders.set(p.accountId, (await selectFirstVerifiedDomain(tx, p.accountId))?.name ?? null);
    const domain = senders.get(p.accountId);
    if (!domain) continue;
    try {
      await tx.query('SAVEPOINT confirmation');
      const result = await sendEmail(
        { db: tx, config: deps.config, links: deps.links, accountId: p.accountId, mode: 'live', monthlyQuota: null, now: deps.now },
        {
          to: p.email,
          from: { email: `no-reply@${domain}`, name: p.listName },
          ...(p.templateId ? { templateId: p.templateId } : BUILT_IN),
          variables: { confirm_url: p.confirmUrl, list_name: p.listName, name: p.name, email: p.email },
          tags: ['double-opt-in'],
        },
      );
      await tx.query('RELEASE SAVEPOINT confirmation');
      closed.push({ id: p.id, messageId: result.id });
    } catch (err) {
      await tx.query('ROLLBACK TO SAVEPOINT confirmation');
      if (!(err instanceof AppError)) throw err;
      closed.push({ id: p.id, messageId: null });
    }
  }
  await markConfirmationsSent(tx, closed, deps.now);
  return closed.filter((c) => c.messageId !== null).length;
}
