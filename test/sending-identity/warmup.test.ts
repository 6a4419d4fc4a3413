import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import type { Source } from '../../src/sending-identity.js';
import { assignSource, chooseSource, nextUtcDay, overflowFrom, warmupStatus } from '../../src/delivery/sources/warmup.js';
import { purgeWarmupCounts, reserveWarmupSend, warmupCountsOn } from '../../src/db/queries/warmup.js';
import { createPool } from '../../src/db/pool.js';
import { testDatabase } from '../helpers/db.js';

const source = (name: string, over: Partial<Source> = {}): Source => ({ name, address: `127.0.0.${80 + name.length}`, ehlo: `${name}.mta.test`, warmup: null, overflow: 'wait', ...over });
const plan = { start: '2026-12-01', daily: [50, 100, 200] };
const fresh = source('fresh', { warmup: plan });
const spilling = source('spilling', { warmup: plan, overflow: 'spill' });
const warmed = source('warmed');
const alsoWarm = source('alsowarm');
const at = (iso: string) => new Date(iso);

describe('warmupStatus', () => {
  test('day 1 is the start day, each UTC day the next cap, no cap after the last', () => {
    assert.deepEqual(warmupStatus(fresh, at('2026-12-01T00:00:00Z')), { day: 1, cap: 50 });
    assert.deepEqual(warmupStatus(fresh, at('2026-12-01T23:59:59.999Z')), { day: 1, cap: 50 });
    assert.deepEqual(warmupStatus(fresh, at('2026-12-02T00:00:00Z')), { day: 2, cap: 100 });
    assert.deepEqual(warmupStatus(fresh, at('2026-12-03T12:00:00Z')), { day: 3, cap: 200 });
    assert.deepEqual(warmupStatus(fresh, at('2026-12-04T00:00:00Z')), { day: 4, cap: null });
  });
  test('before the start the source sends nothing; without a plan there is no cap', () => {
    assert.deepEqual(warmupStatus(fresh, at('2026-11-30T23:59:59Z')), { day: 0, cap: 0 });
    assert.deepEqual(warmupStatus(warmed, at('2026-12-01T00:00:00Z')), { day: null, cap: null });
  });
});

describe('chooseSource', () => {
  const now = at('2026-12-01T10:00:00Z');

  test('under its cap the assigned source sends; at the cap it waits until the next UTC day', () => {
    assert.deepEqual(chooseSource({ assigned: fresh, pool: [fresh, warmed], now, sentToday: 49, messageId: 'm1' }), { kind: 'send', source: fresh, spilled: false });
    const wait = chooseSource({ assigned: fresh, pool: [fresh, warmed], now, sentToday: 50, messageId: 'm1' });
    assert.deepEqual(wait, { kind: 'wait', until: at('2026-12-02T00:00:00Z'), reason: 'source fresh reached its warm-up cap of 50 for today (day 1)' });
  });

  test('spill: past the cap, a warmed source of the pool, spread over them by message, never a warming one', () => {
    const picks = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const d = chooseSource({ assigned: spilling, pool: [spilling, warmed, fresh, alsoWarm], now, sentToday: 50, messageId: `m${i}` });
      assert.equal(d.kind, 'send');
      assert.equal((d as { spilled: boolean }).spilled, true);
      picks.add((d as { source: Source }).source.name);
    }
    assert.deepEqual([...picks].sort(), ['alsowarm', 'warmed']);
  });

  test('spill with no warmed source in the pool: waits, and says why', () => {
    const d = chooseSource({ assigned: spilling, pool: [spilling, fresh], now, sentToday: 50, messageId: 'm1' });
    assert.equal(d.kind, 'wait');
    assert.match((d as { reason: string }).reason, /cap of 50 .* no warmed source to spill to/);
  });

  test('before its start a waiting source waits for its start day, a spilling one spills', () => {
    const early = at('2026-11-28T10:00:00Z');
    assert.deepEqual(chooseSource({ assigned: fresh, pool: [fresh, warmed], now: early, sentToday: 0, messageId: 'm1' }), {
      kind: 'wait', until: at('2026-12-01T00:00:00Z'), reason: 'source fresh starts its warm-up on 2026-12-01',
    });
    assert.deepEqual(chooseSource({ assigned: spilling, pool: [spilling, warmed], now: early, sentToday: 0, messageId: 'm1' }), { kind: 'send', source: warmed, spilled: true });
  });

  test('after the plan: no cap however many were sent', () => {
    assert.equal(chooseSource({ assigned: fresh, pool: [fresh], now: at('2026-12-10T10:00:00Z'), sentToday: 1_000_000, messageId: 'm1' }).kind, 'send');
  });
});

test('assignSource spreads messages evenly over the pool and keeps each message on its source', () => {
  const pool = [source('a'), source('bb')];
  const picks = Array.from({ length: 2000 }, (_, i) => assignSource(pool, `msg_${i}`).name);
  const a = picks.filter((p) => p === 'a').length;
  assert.ok(a > 900 && a < 1100, `${a} of 2000 on a`);
  assert.equal(assignSource(pool, 'msg_7').name, assignSource(pool, 'msg_7').name);
  assert.equal(nextUtcDay(at('2026-12-31T23:59:59Z')).toISOString(), '2027-01-01T00:00:00.000Z');
});

describe('reserving warm-up sends in PostgreSQL', async () => {
  const { pool, url } = await testDatabase();

  test('the cap holds for every worker together: 40 concurrent reservations from two pools, cap 7, exactly 7 taken', async () => {
    const second = createPool(url, 5);
    try {
      const tries = Array.from({ length: 40 }, (_, i) => reserveWarmupSend(i % 2 ? pool : second, { source: 'fresh', provider: 'gmail', day: '2026-12-01', cap: 7 }));
      const results = await Promise.all(tries);
      assert.equal(results.filter(Boolean).length, 7);
    } finally {
      await second.end();
    }
    assert.deepEqual(await warmupCountsOn(pool, '2026-12-01'), [{ source: 'fresh', provider: 'gmail', sent: 7 }]);
  });

  test("with an injected clock: day 1's cap holds per provider, the overflow waits or spills, day 2's cap is the next number", async () => {
    const clock = new ManualClock('2026-12-01T08:00:00Z');
    const poolOf = [spilling, warmed];
    // One delivery decision as the engine makes it: a reservation for a capped source, its overflow otherwise.
    const decide = async (assigned: Source, provider: string) => {
      const now = clock.now();
      const { cap } = warmupStatus(assigned, now);
      const day = now.toISOString().slice(0, 10);
      const reserved = cap === null || (cap > 0 && (await reserveWarmupSend(pool, { source: assigned.name, provider, day, cap })));
      if (reserved) return { kind: 'send' as const, source: assigned, spilled: false };
      return overflowFrom(assigned, poolOf, now, `m${Math.random()}`);
    };
    const run = async (assigned: Source, provider: string, n: number) => {
      const tally = { sent: 0, spilled: 0, waiting: 0 };
      for (let i = 0; i < n; i++) {
        const d = await decide(assigned, provider);
        if (d.kind === 'wait') tally.waiting++;
        else if (d.spilled) tally.spilled++;
        else tally.sent++;
      }
      return tally;
    };
    const waitingSource = { ...fresh, name: 'fresh2' };
    assert.deepEqual(await run(waitingSource, 'gmail', 60), { sent: 50, spilled: 0, waiting: 10 });
    assert.deepEqual(await run(waitingSource, 'yahoo', 55), { sent: 50, spilled: 0, waiting: 5 }, 'the cap is per provider');
    assert.deepEqual(await run(spilling, 'gmail', 60), { sent: 50, spilled: 10, waiting: 0 });
    clock.set('2026-12-02T00:00:00Z');
    assert.deepEqual(await run(waitingSource, 'gmail', 120), { sent: 100, spilled: 0, waiting: 20 });
    clock.set('2026-12-04T00:00:00Z');
    assert.deepEqual(await run(waitingSource, 'gmail', 300), { sent: 300, spilled: 0, waiting: 0 }, 'after the plan: no cap');
    assert.equal(await purgeWarmupCounts(pool, '2026-12-03'), 5);
  });
});
