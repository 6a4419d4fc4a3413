import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { startWebhookReceiver, type WebhookEvent, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { freePort } from '../../src/db/embedded.js';
import { withTransaction } from '../../src/db/pool.js';
import { recordEvents, type EventType } from '../../src/domain/events.js';
import { RETRY_SCHEDULE_MS } from '../../src/domain/webhooks/hooks.js';
import { claimDueHooks, loadHookBatch } from '../../src/queue/webhooks.js';
import { dispatchOnce, type DispatchOptions } from '../../src/workers/webhooks.js';
import { guardedPost } from '../../src/domain/webhooks/ssrf.js';
import { webhookRequest, hookSecret } from '../../src/domain/webhooks/hooks.js';
import { toApiEvent } from '../../src/domain/events.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const deps = { config, pool, clock };

interface Fixture {
  accountId: string;
  headers: Record<string, string>;
  hook: { id: string; secret: string };
  receiver: WebhookReceiver;
}

/** A fresh account with one hook pointing at a fresh receiver (or at `url`). */
async function fixture(events: string[] = ['sent', 'delivered', 'open', 'click', 'bounce', 'complaint', 'unsub', 'deferred'], url?: string): Promise<Fixture> {
  const account = await createTestAccount(pool, `acct ${randomUUID().slice(0, 8)}`);
  const receiver = await startWebhookReceiver();
  after(() => receiver.close());
  const res = await app.inject({
    method: 'POST', url: '/api/v1/hooks', headers: { ...account.live, 'content-type': 'application/json' }, payload: { url: url ?? receiver.url, events },
  });
  assert.equal(res.statusCode, 201, res.body);
  return { accountId: account.accountId, headers: account.live, hook: res.json(), receiver };
}

/** `n` events for the account, one statement per 500 (as a delivery batch records them), 1 ms apart. */
async function record(accountId: string, n: number, type: EventType = 'delivered'): Promise<void> {
  const rows = Array.from({ length: n }, (_, i) => ({
    accountId, messageId: `msg_${String(i).padStart(32, '0')}`, type, email: `r${i}@example.com`,
    ...(type === 'click' ? { url: `https://example.com/${i}` } : {}),
    data: { n: i }, occurredAt: new Date(clock.now().getTime() + i),
  }));
  for (let i = 0; i < rows.length; i += 500) await recordEvents(pool, rows.slice(i, i + 500));
}

/** A pooled connection whose rollup shard (pg_backend_pid() % 4) differs from that of `pid`. */
async function connectionOnOtherShard(pid: number) {
  const skipped = [];
  try {
    for (;;) {
      const client = await pool.connect();
      if ((await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid % 4 !== pid % 4) return client;
      skipped.push(client);
    }
  } finally {
    for (const c of skipped) c.release();
  }
}

/** Dispatch until nothing is due (a backlog drains without timers). */
async function drain(opts: DispatchOptions = {}): Promise<number> {
  let batches = 0;
  for (let i = 0; i < 1000; i++) {
    const reports = await dispatchOnce(deps, opts);
    if (reports.length === 0) return batches;
    batches += reports.length;
  }
  throw new Error('dispatcher never went idle');
}

async function deliveries(f: Fixture) {
  const res = await app.inject({ url: `/api/v1/hooks/${f.hook.id}/deliveries?order=asc&limit=500`, headers: f.headers });
  return res.json().data as Array<{ outcome: string; statusCode: number | null; attempt: number; eventCount: number; attemptedAt: string; nextAttemptAt: string | null; error: string | null }>;
}

async function hookState(f: Fixture) {
  return (await app.inject({ url: `/api/v1/hooks/${f.hook.id}`, headers: f.headers })).json();
}

const ns = (events: WebhookEvent[]) => events.map((e) => e.data.n as number);

test('signature: X-SVC-Signature is the hex HMAC-SHA256 of the exact raw body with the hook secret', async () => {
  const f = await fixture();
  await record(f.accountId, 3, 'click');
  await drain();
  const [req] = f.receiver.requests;
  assert.equal(req.method, 'POST');
  assert.equal(req.path, '/hook');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.equal(req.headers['user-agent'], 'Postline-Webhooks/1');
  const expected = createHmac('sha256', f.hook.secret).update(req.rawBody).digest('hex');
  assert.equal(req.headers['x-svc-signature'], `sha256=${expected}`);
  assert.notEqual(req.headers['x-svc-signature'], `sha256=${createHmac('sha256', 'whsec_wrong').update(req.rawBody).digest('hex')}`);
});

test('payload: {"hookId","events"} with items {id,type,email,messageId,url (click only),occurredAt,data}', async () => {
  const f = await fixture();
  await record(f.accountId, 1, 'click');
  await record(f.accountId, 1, 'open');
  await drain();
  const body = f.receiver.requests[0].json();
  assert.deepEqual(Object.keys(body), ['hookId', 'events']);
  assert.equal(body.hookId, f.hook.id);
  const [click, open] = body.events;
  assert.deepEqual(Object.keys(click), ['id', 'type', 'email', 'messageId', 'url', 'occurredAt', 'data']);
  assert.match(click.id as string, /^evt_[0-9a-f]{32}$/);
  assert.equal(click.url, 'https://example.com/0');
  assert.equal(click.occurredAt, '2026-11-20T10:00:00.000Z');
  assert.deepEqual(click.data, { n: 0 });
  assert.deepEqual(Object.keys(open), ['id', 'type', 'email', 'messageId', 'occurredAt', 'data']);
});

test('batching: 1,200 events arrive as three requests of at most 500, in order', async () => {
  const f = await fixture();
  await record(f.accountId, 1200);
  assert.equal(await drain(), 3);
  assert.deepEqual(f.receiver.requests.map((r) => r.json().events.length), [500, 500, 200]);
  assert.deepEqual(ns(f.receiver.deliveredEvents()), Array.from({ length: 1200 }, (_, i) => i));
  const log = await deliveries(f);
  assert.deepEqual(log.map((d) => [d.outcome, d.statusCode, d.eventCount, d.attempt]), [['delivered', 200, 500, 1], ['delivered', 200, 500, 1], ['delivered', 200, 200, 1]]);
});

test('a backlog goes out batch after batch under one lease, up to batchesPerLease, then the hook is given back', async () => {
  const f = await fixture();
  await record(f.accountId, 2600);
  const mine = (reports: Awaited<ReturnType<typeof dispatchOnce>>) => reports.filter((r) => r.hookId === f.hook.id).map((r) => r.events);
  assert.deepEqual(mine(await dispatchOnce(deps, { batchesPerLease: 3 })), [500, 500, 500]);
  const { rows } = await pool.query('SELECT lease_token FROM hooks WHERE id = $1', [f.hook.id]);
  assert.equal(rows[0].lease_token, null, 'given back');
  assert.deepEqual(mine(await dispatchOnce(deps, { batchesPerLease: 3 })), [500, 500, 100]);
  assert.deepEqual(ns(f.receiver.deliveredEvents()), Array.from({ length: 2600 }, (_, i) => i));
});

test('filtering: only the account\'s events of subscribed types, recorded after the hook was created', async () => {
  const account = await createTestAccount(pool, 'Early');
  await record(account.accountId, 5, 'spam'); // before any hook
  const receiver = await startWebhookReceiver();
  after(() => receiver.close());
  const hook = (await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: { ...account.live, 'content-type': 'application/json' }, payload: { url: receiver.url, events: ['complaint', 'bounce'] } })).json();
  const stranger = await createTestAccount(pool, 'Stranger');
  await record(stranger.accountId, 5, 'spam');
  await record(account.accountId, 3, 'open'); // not subscribed
  await record(account.accountId, 2, 'hard_bounce');
  await record(account.accountId, 1, 'soft_bounce');
  await record(account.accountId, 1, 'spam');
  await drain();
  assert.equal(receiver.requests.length, 1);
  const body = receiver.requests[0].json();
  assert.equal(body.hookId, hook.id);
  assert.deepEqual(body.events.map((e) => e.type), ['hard_bounce', 'hard_bounce', 'soft_bounce', 'spam']);
});

test('retry: 503 twice then 200 delivers the same events once more, on the 10 s / 1 min schedule', async () => {
  const f = await fixture();
  f.receiver.enqueue({ status: 503 }, { status: 503 });
  await record(f.accountId, 20);
  assert.equal((await dispatchOnce(deps))[0].outcome, 'retry');
  assert.deepEqual(await dispatchOnce(deps), [], 'not due before the backoff');
  clock.advance(10_000);
  assert.equal((await dispatchOnce(deps))[0].outcome, 'retry');
  clock.advance(59_000);
  assert.deepEqual(await dispatchOnce(deps), [], 'second backoff is a minute');
  clock.advance(1_000);
  assert.equal((await dispatchOnce(deps))[0].outcome, 'delivered');
  assert.equal(f.receiver.requests.length, 3);
  const bodies = f.receiver.requests.map((r) => r.rawBody.toString());
  assert.equal(bodies[0], bodies[1]);
  assert.equal(bodies[1], bodies[2], 'the very same batch, byte for byte');
  assert.deepEqual(await dispatchOnce(deps), []);
  const log = await deliveries(f);
  assert.deepEqual(log.map((d) => [d.outcome, d.statusCode, d.attempt]), [['retrying', 503, 1], ['retrying', 503, 2], ['delivered', 200, 3]]);
  assert.equal(Date.parse(log[0].nextAttemptAt!) - Date.parse(log[0].attemptedAt), 10_000);
  assert.equal(Date.parse(log[1].nextAttemptAt!) - Date.parse(log[1].attemptedAt), 60_000);
});

test('retry: 408, 429, timeouts and dropped connections are retried; Retry-After is honoured', async () => {
  const f = await fixture();
  // 408 closes its connection, so the dropped one is a fresh socket (a reused one gets one immediate retry).
  f.receiver.enqueue({ status: 429, headers: { 'retry-after': '120' } }, { status: 408, headers: { connection: 'close' } }, { close: true }, { delayMs: 1500 });
  await record(f.accountId, 2);
  const opts = { timeoutMs: 500 };
  assert.equal((await dispatchOnce(deps, opts))[0].outcome, 'retry');
  clock.advance(119_000);
  assert.deepEqual(await dispatchOnce(deps, opts), [], 'Retry-After: 120 beats the 10 s schedule');
  clock.advance(1_000);
  assert.equal((await dispatchOnce(deps, opts))[0].outcome, 'retry'); // 408
  clock.advance(60_000);
  assert.equal((await dispatchOnce(deps, opts))[0].outcome, 'retry'); // socket closed
  clock.advance(300_000);
  assert.equal((await dispatchOnce(deps, opts))[0].outcome, 'retry'); // too slow
  clock.advance(1_800_000);
  assert.equal((await dispatchOnce(deps, opts))[0].outcome, 'delivered');
  const log = await deliveries(f);
  assert.deepEqual(log.map((d) => d.statusCode), [429, 408, null, null, 200]);
  assert.match(log[2].error!, /ECONNRESET|socket hang up/);
  assert.match(log[3].error!, /timeout/);
});

test('no retry: a 400 drops the batch as failed, logs it, and the next batch proceeds', async () => {
  const f = await fixture();
  f.receiver.enqueue({ status: 400, body: 'bad payload' });
  await record(f.accountId, 600);
  await drain();
  assert.equal(f.receiver.requests.length, 2);
  assert.deepEqual(ns(f.receiver.requests[1].json().events), Array.from({ length: 100 }, (_, i) => 500 + i));
  const log = await deliveries(f);
  assert.deepEqual(log.map((d) => [d.outcome, d.statusCode, d.eventCount]), [['failed', 400, 500], ['delivered', 200, 100]]);
  assert.match(log[0].error!, /HTTP 400: bad payload/);
  clock.advance(24 * 3600e3);
  assert.deepEqual(await dispatchOnce(deps), [], 'never retried');
});

test('410 Gone disables the hook: nothing more is sent', async () => {
  const f = await fixture();
  f.receiver.enqueue({ status: 410 });
  await record(f.accountId, 3);
  assert.equal((await dispatchOnce(deps))[0].outcome, 'disabled');
  const state = await hookState(f);
  assert.equal(state.status, 'disabled');
  assert.match(state.disabledReason, /410/);
  await record(f.accountId, 3);
  clock.advance(48 * 3600e3);
  assert.deepEqual(await drain(), 0);
  assert.equal(f.receiver.requests.length, 1);
  assert.equal((await deliveries(f))[0].outcome, 'disabled');
});

test('retries exhausted: after the last step of the schedule (24 h) the hook is disabled', async () => {
  const f = await fixture();
  f.receiver.fallback = { status: 500 };
  await record(f.accountId, 1);
  for (const wait of RETRY_SCHEDULE_MS) {
    assert.equal((await dispatchOnce(deps))[0].outcome, 'retry');
    clock.advance(wait);
  }
  assert.equal((await dispatchOnce(deps))[0].outcome, 'disabled');
  assert.equal(f.receiver.requests.length, RETRY_SCHEDULE_MS.length + 1);
  assert.match((await hookState(f)).disabledReason, /no successful delivery after 9 attempts/);
});

test('receiver down for an hour: everything recorded meanwhile arrives afterwards, in order', async () => {
  const port = await freePort();
  const f = await fixture(['delivered'], `http://127.0.0.1:${port}/hook`); // nothing listens yet
  const start = clock.now().getTime();
  let n = 0;
  while (clock.now().getTime() - start < 3600e3) {
    // 100 events every 5 simulated minutes, the dispatcher trying every 10 s.
    if ((clock.now().getTime() - start) % 300e3 === 0) {
      await recordEvents(pool, Array.from({ length: 100 }, () => ({ accountId: f.accountId, messageId: null, type: 'delivered' as const, email: 'x@example.com', data: { n: n++ }, occurredAt: clock.now() })));
    }
    await dispatchOnce(deps);
    clock.advance(10_000);
  }
  const failed = await deliveries(f);
  assert.deepEqual(failed.map((d) => d.outcome), ['retrying', 'retrying', 'retrying', 'retrying', 'retrying'], '0 s, 10 s, 1 min 10 s, 6 min 10 s, 36 min 10 s');
  assert.ok(failed.every((d) => /ECONNREFUSED/.test(d.error!)));

  const back = await startWebhookReceiver({ port });
  after(() => back.close());
  clock.advance(2 * 3600e3); // the next scheduled attempt (2 h after the 5th)
  await drain();
  assert.equal(n, 1200);
  assert.deepEqual(back.requests.map((r) => r.json().events.length), [500, 500, 200]);
  assert.deepEqual(ns(back.deliveredEvents()), Array.from({ length: 1200 }, (_, i) => i));
});

test('a dispatcher killed mid-dispatch loses nothing: its lease expires and the batch is sent again', async () => {
  const f = await fixture();
  await record(f.accountId, 700);
  // A worker claims the hook, posts the first batch, and dies before recording the outcome.
  const [claimed] = await claimDueHooks(pool, clock.now(), 10, 60_000, 'doomed-worker');
  assert.equal(claimed.id, f.hook.id);
  const batch = await loadHookBatch(pool, claimed, 500);
  const { body, headers } = webhookRequest(claimed.id, batch.map((q) => toApiEvent(q.event!)), hookSecret(claimed.secret, config));
  await guardedPost(new URL(claimed.url), body, headers, { allowPrivate: true, timeoutMs: 2000 });
  assert.equal(f.receiver.requests.length, 1);

  assert.deepEqual(await dispatchOnce(deps), [], 'leased: no second batch in flight for this hook');
  clock.advance(60_000);
  await drain();
  const sizes = f.receiver.requests.map((r) => r.json().events.length);
  assert.deepEqual(sizes, [500, 500, 200], 'the dead worker\'s batch again (at least once), then the rest');
  assert.deepEqual(ns(f.receiver.requests.slice(1).flatMap((r) => r.json().events)), Array.from({ length: 700 }, (_, i) => i));
});

test('a late commit with a smaller seq is delivered after, not lost', async () => {
  const f = await fixture();
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let inserted!: () => void;
  const insertedP = new Promise<void>((r) => (inserted = r));
  let slowPid = 0;
  const slow = withTransaction(pool, async (tx) => {
    slowPid = (await tx.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    await recordEvents(tx, [{ accountId: f.accountId, messageId: null, type: 'open', email: 'slow@example.com', data: { n: 0 }, occurredAt: clock.now() }]);
    inserted();
    await held;
  });
  await insertedP;
  // Larger seq, committed first. Written on a connection of another rollup shard (counters are
  // sharded by pg_backend_pid() % 4): on the same shard it would wait for the held transaction's
  // counter row, which this test only releases afterwards.
  const other = await connectionOnOtherShard(slowPid);
  try {
    await recordEvents(other, [{ accountId: f.accountId, messageId: null, type: 'click', url: 'https://example.com/0', email: 'r0@example.com', data: { n: 0 }, occurredAt: clock.now() }]);
  } finally {
    other.release();
  }
  await drain();
  release();
  await slow;
  await drain();
  assert.deepEqual(f.receiver.requests.map((r) => r.json().events.map((e) => e.email)), [['r0@example.com'], ['slow@example.com']]);
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM hook_queue WHERE hook_id = $1', [f.hook.id]);
  assert.equal(rows[0].n, 0);
});

test('concurrent dispatchers: each hook has one batch in flight, order kept, nothing twice', async () => {
  const a = await fixture();
  const b = await fixture();
  await record(a.accountId, 1500);
  await record(b.accountId, 1500);
  a.receiver.fallback = { delayMs: 20 };
  for (let i = 0; i < 10; i++) {
    const reports = (await Promise.all([dispatchOnce(deps), dispatchOnce(deps), dispatchOnce(deps)])).flat();
    if (reports.length === 0) break;
  }
  for (const f of [a, b]) {
    assert.deepEqual(ns(f.receiver.deliveredEvents()), Array.from({ length: 1500 }, (_, i) => i));
  }
});

test('deleting a hook drops its queue; events keep flowing to the other hooks', async () => {
  const f = await fixture();
  await record(f.accountId, 10);
  const del = await app.inject({ method: 'DELETE', url: `/api/v1/hooks/${f.hook.id}`, headers: f.headers });
  assert.equal(del.statusCode, 204);
  await drain();
  assert.equal(f.receiver.requests.length, 0);
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM hook_queue WHERE hook_id = $1', [f.hook.id]);
  assert.equal(rows[0].n, 0);
});
