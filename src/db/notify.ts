import type { Pool } from './pool.js';
import { inSandbox } from './sandbox.js';

/**
 * Wakes workers after a commit, without NOTIFY inside the writing transaction: PostgreSQL
 * serialises the commits of all notifying transactions on one queue lock, which capped the
 * send API at ~100 accepts/s. Instead, after committing, callers poke a channel; each process
 * keeps at most one pg_notify per channel in flight and folds the pokes that arrive meanwhile
 * into one more. Notifications only shorten waits (every worker also polls), so a lost one
 * costs latency, never mail.
 */
const state = new WeakMap<Pool, Map<string, 'idle' | 'sending' | 'again'>>();

export function notifySoon(pool: Pool, channel: 'postline_messages' | 'postline_events' | 'postline_campaigns' | 'postline_automations'): void {
  if (inSandbox()) return; // a test-key request committed nothing to wake anyone for
  let channels = state.get(pool);
  if (!channels) state.set(pool, (channels = new Map()));
  const current = channels.get(channel) ?? 'idle';
  if (current !== 'idle') {
    channels.set(channel, 'again');
    return;
  }
  const send = (): void => {
    channels!.set(channel, 'sending');
    pool
      .query('SELECT pg_notify($1, $2)', [channel, ''])
      .catch(() => {})
      .finally(() => {
        if (channels!.get(channel) === 'again') send();
        else channels!.set(channel, 'idle');
      });
  };
  send();
}
