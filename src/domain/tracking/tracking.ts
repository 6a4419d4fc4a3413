/**
 * What happens when a recipient's mail client comes back to us (docs/architecture.md#events-and-webhooks, #white-label-tracking;
 * docs/tracking.md): the open pixel, a tracked link, the unsubscribe page and RFC 8058
 * one-click POST. Every function first verifies the signed token (tracking-tokens.ts); a
 * token that does not verify, or names a message that does not exist (sandbox ids never
 * have a row), gives `null` and the HTTP layer answers 404. Nothing here knows HTTP.
 */
import { GroupCommit } from '../../db/group-commit.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { getMessageById } from '../../db/queries/messages.js';
import {
  hasUnsubscribeEvent, insertClickEvents, insertOpenEvents, lockMessageForUnsubscribe, type TrackedVisit,
} from '../../db/queries/tracking.js';
import { newId } from '../../ids.js';
import { recordEvents } from '../events.js';
import { verifyClickToken, verifyOpenToken, verifyUnsubscribeToken, type TokenKey } from './tokens.js';

/**
 * Suppresses an address for an unsubscribe (audience/address-status.ts's suppressAddress).
 * Passed in: tracking sits below the audience (sending signs its links), so it announces the
 * unsubscribe rather than calling up.
 */
export type SuppressForUnsubscribe = (
  db: Queryable, accountId: string, email: string, reason: 'unsubscribe', at: Date, detail: string,
) => Promise<{ created: boolean }>;

export interface TrackingDeps {
  pool: Pool;
  suppress: SuppressForUnsubscribe;
  /** `new TrackingLinks(config).tokenKey`: the key the links were signed with. */
  key: TokenKey;
  /** Click and open events are group-committed: one statement per batch of requests. */
  clicks: GroupCommit<TrackedVisit & { url: string }, boolean>;
  opens: GroupCommit<TrackedVisit, { unique: boolean } | null>;
}

/** One per process (the API's tracking routes): the batches are shared by its requests. */
export function createTrackingDeps(pool: Pool, key: TokenKey, suppress: SuppressForUnsubscribe): TrackingDeps {
  return {
    pool,
    suppress,
    key,
    clicks: new GroupCommit((visits) => insertClickEvents(pool, visits)),
    opens: new GroupCommit((visits) => insertOpenEvents(pool, visits)),
  };
}

/** One request of a recipient's client. */
export interface Visit {
  userAgent: string | undefined;
  at: Date;
}

/** Stored user agents are cut here: the header is attacker-sized, the event row is not. */
const MAX_USER_AGENT = 512;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;

// ---------------------------------------------------------------------------------------
// Who fetched the pixel

export interface Opener {
  /** true: fetched by automation, not because a person opened the message. */
  machine: boolean;
  /** The image proxy that fetched it, when recognised. */
  proxy?: 'apple' | 'google' | 'yahoo';
}

/**
 * User-agent heuristics only: the proxies' IP ranges (the other half of what ESPs use) need
 * lists we cannot fetch offline. First match wins. `machine` is for fetches that happen
 * without a person: Apple Mail Privacy Protection loads every remote image when the message
 * is received, and Gmail sometimes prefetches for signed-in users. Google's and Yahoo's image
 * proxies otherwise fetch when the person opens the message (then cache it): a real open,
 * proxied, so only `proxy` is set. See docs/tracking.md.
 */
const OPENERS: readonly { test: (ua: string) => boolean; opener: Opener }[] = [
  // Apple MPP's proxy sends the bare product token and nothing else.
  { test: (ua) => ua === 'Mozilla/5.0', opener: { machine: true, proxy: 'apple' } },
  // Gmail's prefetch (reported by SparkPost, 2021): a fixed, outdated Edge UA with a second
  // "Mozilla/5.0" appended.
  { test: (ua) => /Edge\/12\.246 Mozilla\/5\.0$/.test(ua), opener: { machine: true, proxy: 'google' } },
  { test: (ua) => ua.includes('GoogleImageProxy'), opener: { machine: false, proxy: 'google' } },
  { test: (ua) => ua.includes('YahooMailProxy'), opener: { machine: false, proxy: 'yahoo' } },
];

export function classifyOpener(userAgent: string | undefined): Opener {
  const ua = (userAgent ?? '').trim();
  return OPENERS.find((o) => o.test(ua))?.opener ?? { machine: false };
}

function userAgentOf(visit: Visit): string | null {
  // Control characters out: jsonb refuses \u0000, and one bad row would fail its whole batch.
  const ua = visit.userAgent?.replace(CONTROL_CHARS, '').slice(0, MAX_USER_AGENT);
  return ua ? ua : null;
}

// ---------------------------------------------------------------------------------------
// Open pixel and click

/**
 * Records an `open`: every fetch is one event; the message's first carries `unique: true`,
 * later ones `unique: false` (decided by the database, so two simultaneous first fetches
 * still give exactly one unique open).
 */
export async function recordOpen(deps: TrackingDeps, token: string, visit: Visit): Promise<{ unique: boolean } & Opener | null> {
  const verified = verifyOpenToken(deps.key, token);
  if (!verified) return null;
  const opener = classifyOpener(visit.userAgent);
  const data = { machine: opener.machine, ...(opener.proxy ? { proxy: opener.proxy } : {}), userAgent: userAgentOf(visit) };
  const inserted = await deps.opens.submit({ id: newId('evt'), messageId: verified.messageId, data, occurredAt: visit.at });
  return inserted ? { ...inserted, ...opener } : null;
}

/**
 * Where a click token sends the browser, without recording anything (HEAD requests, link
 * checkers). The URL is returned as `new URL(url).href`: the same address, percent-encoded
 * so it is plain ASCII for the Location header.
 */
export function clickTarget(key: TokenKey, token: string): { messageId: string; url: string; location: string } | null {
  const verified = verifyClickToken(key, token);
  return verified ? { ...verified, location: new URL(verified.url).href } : null;
}

/** Records a `click` with the URL as the email linked it; returns where to redirect. */
export async function recordClick(deps: TrackingDeps, token: string, visit: Visit): Promise<{ location: string } | null> {
  const target = clickTarget(deps.key, token);
  if (!target) return null;
  const found = await deps.clicks.submit({
    id: newId('evt'),
    messageId: target.messageId,
    url: target.url,
    data: { userAgent: userAgentOf(visit) },
    occurredAt: visit.at,
  });
  return found ? { location: target.location } : null;
}

// ---------------------------------------------------------------------------------------
// Unsubscribe

export interface UnsubscribeTarget {
  email: string;
  /** Who the recipient is leaving, as the message's From shows it. */
  sender: string;
}

function senderOf(fromName: string | null, fromEmail: string): string {
  return fromName?.trim() || (fromEmail.split('@').pop() ?? fromEmail);
}

/** For the confirmation page (GET): no effect, so link scanners that prefetch it change nothing. */
export async function describeUnsubscribe(deps: TrackingDeps, token: string): Promise<UnsubscribeTarget | null> {
  const verified = verifyUnsubscribeToken(deps.key, token);
  if (!verified) return null;
  const message = await getMessageById(deps.pool, verified.messageId);
  return message ? { email: message.to_email, sender: senderOf(message.from_name, message.from_email) } : null;
}

/**
 * The one-click unsubscribe (RFC 8058 POST, or the page's button): the recipient's address is
 * suppressed for the account (reason `unsubscribe`; address-status.ts also updates the
 * account's subscribers) and an `unsubscribe` event is recorded, in one transaction.
 *
 * Posting again is harmless: the suppression is kept as it is, and the event is recorded only
 * when this message has none yet, or when the address had to be suppressed again (it was
 * re-subscribed since, so its standing really changed). An address already suppressed for
 * another reason (a bounce, a complaint) keeps that reason and still gets this message's
 * unsubscribe event once.
 */
export async function unsubscribeByToken(
  deps: TrackingDeps,
  token: string,
  visit: Visit,
): Promise<UnsubscribeTarget & { eventRecorded: boolean } | null> {
  const verified = verifyUnsubscribeToken(deps.key, token);
  if (!verified) return null;
  return withTransaction(deps.pool, async (tx) => {
    const message = await lockMessageForUnsubscribe(tx, verified.messageId);
    if (!message) return null;
    const { created } = await deps.suppress(tx, message.account_id, message.to_email, 'unsubscribe', visit.at, `unsubscribe link of ${message.id}`);
    const eventRecorded = created || !(await hasUnsubscribeEvent(tx, message.id));
    if (eventRecorded) {
      await recordEvents(tx, [
        { accountId: message.account_id, messageId: message.id, type: 'unsubscribe', email: message.to_email, data: { userAgent: userAgentOf(visit) }, occurredAt: visit.at },
      ]);
    }
    return { email: message.to_email, sender: senderOf(message.from_name, message.from_email), eventRecorded };
  });
}
