import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { testDatabase } from '../helpers/db.js';
import type { Pool } from '../../src/db/pool.js';
import { NOTIFY_GAP_MS, notifySoon } from '../../src/db/notify.js';

// db/notify.ts on a real PostgreSQL. What notifySoon sends is counted where it calls the pool
// (exact, whatever the machine's load); a LISTEN connection checks that it arrives.
const { pool, url } = await testDatabase();
// Its own connection, not the pool's: the pool's end at the file's end must not wait for it.
const listener = new pg.Client({ connectionString: url });
listener.on('error', () => {}); // the database is dropped under it at the end
await listener.connect();
after(() => listener.end().catch(() => {}));
const received = new Map<string, number>();
listener.on('notification', (n) => received.set(n.channel, (received.get(n.channel) ?? 0) + 1));
await listener.query('LISTEN postline_messages');
await listener.query('LISTEN postline_events');

/** The pool as notifySoon sees it, recording when each pg_notify is sent (its own channel state). */
function countingPool(): { pool: Pool; sends: number[] } {
  const sends: number[] = [];
  const counting = new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') {
        return (...args: Parameters<Pool['query']>) => {
          sends.push(Date.now());
          return (target.query as (...a: unknown[]) => unknown)(...args);
        };
      }
      return Reflect.get(target, prop);
    },
  });
  return { pool: counting, sends };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('a lone poke is sent at once, and arrives', async () => {
  received.clear();
  const { pool: p, sends } = countingPool();
  notifySoon(p, 'postline_messages');
  assert.equal(sends.length, 1, 'sent in the same tick');
  await until(() => received.get('postline_messages') === 1);
  await new Promise((r) => setTimeout(r, NOTIFY_GAP_MS * 3));
  assert.equal(sends.length, 1, 'one poke, one notification');
});

test('a stream of pokes becomes at most one notification per gap, and the last poke is never dropped', async () => {
  received.clear();
  const { pool: p, sends } = countingPool();
  const t0 = Date.now();
  let pokes = 0;
  // At least 300 ms and 600 pokes: on a loaded machine a turn of the event loop can take a
  // millisecond, and the count, not the clock, is what makes the stream dense.
  while (Date.now() - t0 < 300 || pokes < 600) {
    notifySoon(p, 'postline_messages');
    pokes++;
    await new Promise((r) => setImmediate(r));
  }
  const lastPoke = Date.now();
  // Settled: nothing in flight, nothing owed. A send's notification can arrive before its own
  // query's answer, and the send owed to the last poke only follows that answer: under load it
  // comes tens of milliseconds later, so settled means half a second without a send.
  await until(() => sends.length > 0 && Date.now() - sends[sends.length - 1] > 500 && received.get('postline_messages') === sends.length);
  assert.ok(sends.length >= 2, `${sends.length} notifications`);
  // ≥ the gap, less the millisecond that may tick between notify's clock reading and this one.
  for (let i = 1; i < sends.length; i++) assert.ok(sends[i] - sends[i - 1] >= NOTIFY_GAP_MS - 1, `sends ${sends[i] - sends[i - 1]} ms apart`);
  assert.ok(sends.length <= (lastPoke - t0) / NOTIFY_GAP_MS + 2, `${sends.length} notifications for ${pokes} pokes in ${lastPoke - t0} ms`);
  assert.ok(sends[sends.length - 1] >= lastPoke - NOTIFY_GAP_MS, 'a notification follows the last poke');
});

test('pokes on different channels are throttled separately', async () => {
  received.clear();
  const { pool: p, sends } = countingPool();
  notifySoon(p, 'postline_messages');
  notifySoon(p, 'postline_events');
  assert.equal(sends.length, 2);
  await until(() => received.get('postline_messages') === 1 && received.get('postline_events') === 1);
});
