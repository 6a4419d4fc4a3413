import { test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ManualClock } from '../../src/clock.js';
import { planOutcome } from '../../src/delivery/outcome.js';
import { claimDueMessages } from '../../src/delivery/queue.js';
import { recordSteps, type Step } from '../../src/delivery/record.js';
import { classifySmtpReply } from '../../src/mail/classify.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

// The record step's writes (src/delivery/record.ts): the usual group is one statement that
// releases, records states, sources and events, and notifies; a group with a bounce adds its
// suppression in the same transaction.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { pool } = env;
const receiver = await startWebhookReceiver();
const hook = await env.app.inject({
  method: 'POST', url: '/api/v1/hooks', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { url: receiver.url, events: ['delivered', 'hard_bounce'] },
});
await receiver.close();

async function claimed(n: number, worker: string) {
  const emails = Array.from({ length: n }, (_, i) => basicEmail({ to: `rec${Date.now()}${i}@${RECIPIENT_DOMAIN}` }));
  const res = await env.app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { emails } });
  assert.equal(res.statusCode, 200);
  const rows = await claimDueMessages(pool, worker, clock.now(), n, 60_000);
  assert.equal(rows.length, n);
  return rows.sort((a, b) => a.to_email.localeCompare(b.to_email));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Notifications on `channel` from now on (those of the accepts before are let through first). */
async function listen(channel: string): Promise<{ count: () => number; close: () => Promise<void> }> {
  const client = new pg.Client({ connectionString: env.dbUrl });
  await client.connect();
  let n = 0;
  client.on('notification', (m) => {
    if (m.channel === channel) n++;
  });
  await client.query(`LISTEN ${channel}`);
  await sleep(200);
  const before = n;
  return { count: () => n - before, close: () => client.end() };
}

test('record: one group releases, records states, sources and ordered events, queues them for hooks and notifies once; a message another worker holds is left alone', async (t) => {
  const [a, b, c, d] = await claimed(4, 'w1');
  // c's lease expired and another worker claimed it meanwhile.
  await pool.query(`UPDATE messages SET locked_by = 'w2' WHERE id = $1`, [c.id]);
  const events = await listen('postline_events');
  t.after(() => events.close());
  const now = clock.now();
  const delivered = (m: typeof a) => planOutcome(m, { kind: 'delivered', response: '250 ok', mx: 'mx.example.net' }, now);
  const source = { name: 'bulk1', address: '127.0.0.72', ehlo: 'bulk1.test' } as never;
  const steps: Step[] = [{ ...delivered(d), source }, { release: { id: b.id, nextAttemptAt: new Date(now.getTime() + 5_000) } }, delivered(c), delivered(a)];
  await recordSteps(pool, 'w1', now, steps);

  const rows = new Map((await pool.query(`SELECT id, status, attempts, locked_by, source_name, source_address, delivered_at, next_attempt_at FROM messages WHERE id = ANY($1)`, [[a.id, b.id, c.id, d.id]])).rows.map((r) => [r.id, r]));
  assert.equal(rows.get(a.id).status, 'delivered');
  assert.equal(rows.get(a.id).locked_by, null);
  assert.equal(rows.get(a.id).source_name, null);
  assert.deepEqual([rows.get(d.id).status, rows.get(d.id).source_name, rows.get(d.id).source_address], ['delivered', 'bulk1', '127.0.0.72']);
  assert.deepEqual([rows.get(b.id).status, rows.get(b.id).attempts, rows.get(b.id).locked_by], ['queued', 0, null], 'released untried: the attempt undone');
  assert.equal(rows.get(b.id).next_attempt_at.getTime(), now.getTime() + 5_000);
  assert.deepEqual([rows.get(c.id).status, rows.get(c.id).locked_by], ['sending', 'w2'], 'the newer claim is not overwritten');

  const recorded = (await pool.query(`SELECT message_id, type FROM events WHERE message_id = ANY($1) AND type <> 'sent' ORDER BY seq`, [[a.id, b.id, c.id, d.id]])).rows;
  assert.deepEqual(recorded, [{ message_id: d.id, type: 'delivered' }, { message_id: a.id, type: 'delivered' }], 'events of the messages recorded, in the group\'s order');
  const queued = (await pool.query(`SELECT e.message_id FROM hook_queue q JOIN events e ON e.seq = q.event_seq WHERE q.hook_id = $1 ORDER BY q.event_seq`, [hook.json().id])).rows;
  assert.deepEqual(queued.map((r) => r.message_id), [d.id, a.id], 'queued for the hook by the events trigger');
  for (let i = 0; i < 100 && events.count() === 0; i++) await sleep(20);
  await sleep(100);
  assert.equal(events.count(), 1, 'one notification for the group');
});

test('record: a group of releases only records no event and sends no notification', async (t) => {
  const [a] = await claimed(1, 'w1');
  const events = await listen('postline_events');
  t.after(() => events.close());
  await recordSteps(pool, 'w1', clock.now(), [{ release: { id: a.id, nextAttemptAt: clock.now() } }]);
  assert.equal((await pool.query(`SELECT status FROM messages WHERE id = $1`, [a.id])).rows[0].status, 'queued');
  assert.equal((await pool.query(`SELECT count(*)::int AS n FROM events WHERE message_id = $1 AND type <> 'sent'`, [a.id])).rows[0].n, 0);
  await sleep(200);
  assert.equal(events.count(), 0);
});

test('record: a hard bounce of a dead address suppresses it in the same write as its state and event', async () => {
  const [a, b] = await claimed(2, 'w1');
  const now = clock.now();
  const bounce = planOutcome(a, classifySmtpReply(550, '550 5.1.1 <x>: user unknown', 'mx.example.net', 'RCPT TO'), now);
  assert.equal(bounce.suppress, true);
  await recordSteps(pool, 'w1', now, [bounce, planOutcome(b, { kind: 'delivered', response: '250 ok', mx: 'mx.example.net' }, now)]);
  const states = (await pool.query(`SELECT id, status FROM messages WHERE id = ANY($1) ORDER BY to_email`, [[a.id, b.id]])).rows.map((r) => r.status);
  assert.deepEqual(states, ['bounced', 'delivered']);
  const suppressed = (await pool.query(`SELECT count(*)::int AS n FROM suppressions WHERE account_id = $1 AND email = $2`, [env.acme.accountId, a.to_email])).rows[0].n;
  assert.equal(suppressed, 1);
  const types = (await pool.query(`SELECT type FROM events WHERE message_id = ANY($1) AND type <> 'sent' ORDER BY seq`, [[a.id, b.id]])).rows.map((r) => r.type);
  assert.deepEqual(types, ['hard_bounce', 'delivered']);
});
