/**
 * Warm-up caps and per-source suspension in the delivery engine, on loopback with an injected
 * clock: sources are 127.0.0.x addresses, the test MX records where each message came from.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.js';
import { setAccountPool } from '../../src/domain/accounts.js';
import { assignSource } from '../../src/delivery/sources/warmup.js';
import { createTestAccount, type TestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

const A = '127.0.0.121'; // warming, waits
const B = '127.0.0.122'; // warming, spills
const W = '127.0.0.123'; // warmed
const S1 = '127.0.0.124';
const S2 = '127.0.0.125';
const dir = mkdtempSync(join(tmpdir(), 'postline-warmup-delivery-'));
const policyPath = join(dir, 'policy.json');
writeFileSync(policyPath, JSON.stringify({
  sources: {
    a: { address: A, ehlo: 'a.postline.test', warmup: { start: '2026-11-20', daily: [3, 5] } },
    b: { address: B, ehlo: 'b.postline.test', warmup: { start: '2026-11-21', daily: [2] }, overflow: 'spill' },
    w: { address: W, ehlo: 'w.postline.test' },
    s1: { address: S1, ehlo: 's1.postline.test' },
    s2: { address: S2, ehlo: 's2.postline.test' },
  },
  pools: { transactional: ['a'], broadcast: ['w'], spill: ['b', 'w'], pair: ['s1', 's2'] },
}));

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock, env: { POSTLINE_DELIVERY_POLICY: policyPath } });
const { app, pool, config, dns, mx, acme } = env;
// gmail.test is served by "Google" (the shipped gmail provider matches *.google.com): another provider than example.net's.
dns.setRecords('gmail.test', 'MX', [{ exchange: 'aspmx.l.google.com', priority: 10 }]);
dns.setRecords('aspmx.l.google.com', 'A', ['127.0.0.1']);

async function accountWithPool(name: string, domain: string, poolName: string): Promise<TestAccount> {
  const account = await createTestAccount(pool, name);
  await createVerifiedDomain(pool, account.accountId, domain, config.secret);
  await setAccountPool(pool, Object.keys(config.deliveryPolicy.identity.pools), account.accountId, poolName);
  return account;
}

async function sendMany(n: number, to: (i: number) => string, account = acme, from = 'hello@acme.test'): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await env.send(basicEmail({ to: to(i), from: { email: from } }), account.live);
    assert.equal(r.statusCode, 202, r.body);
    ids.push(r.json().id);
  }
  return ids;
}

const statusOf = async (id: string, account = acme) => (await app.inject({ url: `/api/v1/emails/${id}`, headers: account.live })).json();

test("warm-up: day 1's cap holds per provider, the overflow waits for the next UTC day, day 2's cap is the next number", async () => {
  const start = mx.messages.length;
  const toDefault = await sendMany(5, (i) => `w${i}@${RECIPIENT_DOMAIN}`);
  const toGmail = await sendMany(4, (i) => `g${i}@gmail.test`);
  await env.deliverAll();
  const day1 = mx.messages.slice(start);
  assert.equal(day1.filter((m) => m.envelope.to[0].endsWith(RECIPIENT_DOMAIN)).length, 3, 'cap 3 for the default destination');
  assert.equal(day1.filter((m) => m.envelope.to[0].endsWith('gmail.test')).length, 3, 'and 3 for gmail, counted apart');
  assert.ok(day1.every((m) => m.remoteAddress === A));
  const waiting = [...toDefault, ...toGmail].map((id) => statusOf(id));
  const states = await Promise.all(waiting);
  const held = states.filter((s) => s.status !== 'delivered');
  assert.equal(held.length, 3);
  for (const s of held) {
    assert.equal(s.status, 'queued', 'waiting is not an attempt');
    assert.equal(s.nextAttemptAt, '2026-11-21T00:00:00.000Z');
  }

  // The deliverability data shows the progress per provider.
  const sources = (await app.inject({ url: '/api/v1/deliverability/sources', headers: acme.live })).json();
  assert.deepEqual(sources.data.map((x: { name: string; warmup: unknown }) => [x.name, x.warmup]), [
    ['a', { start: '2026-11-20', day: 1, cap: 3, sentToday: 6, providers: [{ name: 'gmail', sentToday: 3 }, { name: `mx:mx.${RECIPIENT_DOMAIN}`, sentToday: 3 }] }],
    ['w', null],
  ]);

  // Day 2: the three that waited go, and more up to 5 per provider.
  clock.set('2026-11-21T00:00:01.000Z');
  const more = await sendMany(4, (i) => `x${i}@${RECIPIENT_DOMAIN}`);
  await env.deliverAll();
  const day2 = mx.messages.slice(start + day1.length);
  assert.equal(day2.filter((m) => m.envelope.to[0].endsWith(RECIPIENT_DOMAIN)).length, 5, 'day 2: cap 5');
  assert.equal(day2.filter((m) => m.envelope.to[0].endsWith('gmail.test')).length, 1);
  const left = (await Promise.all([...toDefault, ...more].map((id) => statusOf(id)))).filter((s) => s.status !== 'delivered');
  assert.equal(left.length, 1, '2 waiting from day 1 + 4 new to the default destination, 5 sent');
  assert.equal(left[0].nextAttemptAt, '2026-11-22T00:00:00.000Z');
});

test('warm-up with spill (on b\'s first day): past the cap, mail leaves from the warmed source of the pool', async () => {
  const spiller = await accountWithPool('Spill Co', 'spill.test', 'spill');
  const start = mx.messages.length;
  const ids = await sendMany(24, (i) => `s${i}@${RECIPIENT_DOMAIN}`, spiller, 'hi@spill.test');
  await env.deliverAll();
  const arrived = mx.messages.slice(start);
  assert.equal(arrived.length, 24, 'nothing waits');
  const identity = config.deliveryPolicy.identity;
  const spillPool = identity.pools.spill.map((n) => identity.sources.find((s) => s.name === n)!);
  const assignedToB = ids.filter((id) => assignSource(spillPool, id).name === 'b').length;
  assert.ok(assignedToB > 2, `enough mail for b to overflow (${assignedToB})`);
  assert.equal(arrived.filter((m) => m.remoteAddress === B).length, 2, "b's cap on its first day");
  assert.equal(arrived.filter((m) => m.remoteAddress === W).length, 22);
  const sources = new Set((await Promise.all(ids.map((id) => statusOf(id, spiller)))).map((s) => s.source.name));
  assert.ok([...sources].every((n) => n === 'b' || n === 'w'));
});

test('a throttled source is suspended at that provider only: the other source of the pool keeps sending', async () => {
  const pair = await accountWithPool('Pair Co', 'pair.test', 'pair');
  // Google throttles s1 (421-4.7.28, the shipped gmail rule) and accepts s2.
  mx.setRule((_rcpt, session) => (session.remoteAddress === S1 ? { code: 421, message: '4.7.28 Our system has detected an unusual rate of unsolicited mail originating from your IP address' } : 'accept'));
  try {
    const start = mx.messages.length;
    const ids = await sendMany(16, (i) => `p${i}@gmail.test`, pair, 'hi@pair.test');
    await env.deliverAll();
    const states = await Promise.all(ids.map((id) => statusOf(id, pair)));
    const viaS1 = states.filter((s) => s.source?.name === 's1' || (s.status !== 'delivered' && s.source === null));
    const delivered = states.filter((s) => s.status === 'delivered');
    assert.ok(delivered.length > 0 && viaS1.length > 0, `both sources had mail: ${delivered.length} delivered`);
    assert.ok(delivered.every((s) => s.source.name === 's2'));
    assert.ok(mx.messages.slice(start).every((m) => m.remoteAddress === S2));
    // The message that met the throttle is deferred with the reply; the rest of s1's share may
    // still be queued untried, parked by the suspension. Neither is a bounce.
    const waiting = states.filter((x) => x.status !== 'delivered');
    for (const s of waiting) assert.ok(['deferred', 'queued'].includes(s.status), `throttling is never a bounce: ${s.status}`);
    const deferred = waiting.filter((s) => s.status === 'deferred');
    assert.ok(deferred.length > 0, 'the throttled attempt is deferred');
    for (const s of deferred) assert.match(s.lastResponse, /4\.7\.28/);

    // While s1 is suspended at gmail, more mail to gmail through s2 flows.
    const later = await sendMany(8, (i) => `q${i}@gmail.test`, pair, 'hi@pair.test');
    await env.deliverAll();
    const laterStates = await Promise.all(later.map((id) => statusOf(id, pair)));
    assert.ok(laterStates.some((s) => s.status === 'delivered' && s.source.name === 's2'));
    const row = await pool.query("SELECT source, suspended_until FROM delivery_shaping WHERE destination = 'gmail' AND suspended_until IS NOT NULL");
    assert.deepEqual(row.rows.map((r) => r.source), ['s1']);
  } finally {
    mx.setRule(() => 'accept');
  }
});
