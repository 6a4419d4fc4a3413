import type { Pool } from './pool.js';
import { inSandbox } from './sandbox.js';

/**
 * Wakes workers after a commit, without NOTIFY inside the writing transaction: PostgreSQL
 * serialises the commits of all notifying transactions on one queue lock, which capped the
 * send API at ~100 accepts/s. Instead, after committing, callers poke a channel; each process
 * keeps at most one pg_notify per channel in flight, folds the pokes that arrive meanwhile
 * into one more, and sends at most one per channel every NOTIFY_GAP_MS. A lone poke is sent
 * at once; under load a channel costs ≤ 1000 / NOTIFY_GAP_MS statements a second instead of
 * one after another without pause (bench/send-api: 40 % of the API's statements were
 * pg_notify, each waking every listener). Notifications only shorten waits (every worker also
 * polls), so a late or lost one costs latency, never mail.
 */
export const NOTIFY_GAP_MS = 10;

/**
 * `postline_hooks` and `postline_automation_defs` say that a hook or an automation may have
 * appeared (workers/presence.ts: the loops that skip wake-ups while there is none read again).
 */
type Channel = 'postline_messages' | 'postline_events' | 'postline_campaigns' | 'postline_automations' | 'postline_hooks' | 'postline_automation_defs';

interface ChannelState {
  /** A pg_notify is in flight, or waiting for the gap to pass. */
  busy: boolean;
  /** A poke arrived while busy: one more is owed. */
  owed: boolean;
  /** When the last pg_notify was sent (Date.now()). */
  sentAt: number;
}

const state = new WeakMap<Pool, Map<Channel, ChannelState>>();

export function notifySoon(pool: Pool, channel: Channel): void {
  if (inSandbox()) return; // a test-key request committed nothing to wake anyone for
  let channels = state.get(pool);
  if (!channels) state.set(pool, (channels = new Map()));
  let st = channels.get(channel);
  if (!st) channels.set(channel, (st = { busy: false, owed: false, sentAt: -Infinity }));
  if (st.busy) {
    st.owed = true;
    return;
  }
  st.busy = true;
  sendWhenDue(pool, channel, st);
}

/**
 * Sends once NOTIFY_GAP_MS has passed since the last send (rechecked when the timer fires: a
 * timer may fire a millisecond early), then again if owed. The timer does not keep the process
 * alive: a notification lost at exit only delays a worker's next poll.
 */
function sendWhenDue(pool: Pool, channel: Channel, st: ChannelState): void {
  const wait = st.sentAt + NOTIFY_GAP_MS - Date.now();
  if (wait > 0) {
    setTimeout(() => sendWhenDue(pool, channel, st), wait).unref();
    return;
  }
  st.owed = false;
  st.sentAt = Date.now();
  pool
    .query('SELECT pg_notify($1, $2)', [channel, ''])
    .catch(() => {})
    .finally(() => {
      if (st.owed) sendWhenDue(pool, channel, st);
      else st.busy = false;
    });
}
