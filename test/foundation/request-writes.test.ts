import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Queryable } from '../../src/db/pool.js';
import type { MessageRow, SentEventRow } from '../../src/db/queries/messages.js';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import { RequestWrites } from '../../src/domain/request-writes.js';
import { newId } from '../../src/ids.js';
import { bootApp, createTestAccount, ManualClock, type TestAccount } from '../helpers/app.js';

/**
 * An API process's rate counts and accepted sends share one group commit
 * (domain/request-writes.ts): counts that queue while a send is in flight ride with the next
 * send's statement (db/queries/counted-accepts.ts). The limit must stay exact across processes
 * and the sends be stored as by their own statement.
 */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const first = await bootApp({ clock });
// A second app instance on the same database: another API process.
const second = await bootApp({ clock, pool: first.pool, dbUrl: first.dbUrl });
const pool = first.pool;

async function sender(name: string, domainName: string): Promise<TestAccount> {
  const account = await createTestAccount(pool, name);
  const domain = await createDomain(pool, { accountId: account.accountId, name: domainName, now: clock.now() }, { secret: first.config.secret, targets: dnsTargetsOf(first.config) });
  await forceVerifyDomain(pool, domain.id, clock.now());
  return account;
}

const send = (app: typeof first.app, account: TestAccount, to: string, from = 'a@acme.test') =>
  app.inject({
    method: 'POST', url: '/api/v1/emails', headers: { ...account.live, 'content-type': 'application/json' },
    payload: { to, from: { email: from }, subject: 'Hi', html: '<p>Hi</p>' },
  });

/** The statements a pool ran, by name (unnamed ones as "text"). */
function countingPool(): { db: Queryable; names: string[] } {
  const names: string[] = [];
  const db: Queryable = {
    query: ((config: string | { name?: string }, values?: unknown[]) => {
      names.push(typeof config === 'string' ? 'text' : (config.name ?? 'text'));
      return pool.query(config as string, values);
    }) as Queryable['query'],
  };
  return { db, names };
}

function sendOf(accountId: string, domainId: string, to: string, html = '<p>Hi</p>'): { rows: MessageRow[]; keys: string[]; events: SentEventRow[] } {
  const now = clock.now();
  const id = newId('msg');
  return {
    rows: [{
      id, account_id: accountId, domain_id: domainId, status: 'queued', from_email: 'a@acme.test', from_name: null, to_email: to,
      to_domain: 'example.net', cc: [], bcc: [], reply_to: null, subject: 's', html, text: null, headers: {}, attachments: [], tags: [],
      template_id: null, campaign_id: null, attempts: 0, next_attempt_at: now, first_attempt_at: null, last_response: null, last_mx: null,
      locked_by: null, scheduled_at: null, delivered_at: null, created_at: now,
    }],
    keys: [to.toLowerCase()],
    events: [{ id: newId('evt'), account_id: accountId, message_id: id, type: 'sent', email: to, url: null, data: {}, occurred_at: now }],
  };
}

/** An account with a verified domain, RequestWrites over a pool that records statement names, the account's live bucket. */
async function riderSetup(name: string, domain: string) {
  const acc = await sender(name, domain);
  const domainId = (await pool.query('SELECT id FROM domains WHERE account_id = $1', [acc.accountId])).rows[0].id as string;
  const { db, names } = countingPool();
  return { acc, domainId, names, writes: new RequestWrites({ pool: db }), window: new Date('2026-11-20T10:00:00.000Z'), bucket: `${acc.accountId}:live` };
}

const windowTotal = async (bucket: string) =>
  (await pool.query('SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_windows WHERE bucket = $1', [bucket])).rows[0].n as number;
const messagesOf = async (accountId: string) =>
  (await pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [accountId])).rows[0].n as number;

test('request writes: counts queued behind a send ride with the next send, each request ranked once in submission order', async () => {
  const { acc, domainId, names, writes, window, bucket } = await riderSetup('Riding', 'riding.test');
  // The first count goes out alone; everything submitted meanwhile queues for the next statement.
  const ranks: Promise<number>[] = [writes.count(bucket, window)];
  const stored: Promise<Set<string>>[] = [];
  for (let i = 0; i < 5; i++) {
    stored.push(writes.storeSend(...Object.values(sendOf(acc.accountId, domainId, `r${i}@example.net`)) as [MessageRow[], string[], SentEventRow[]]));
    ranks.push(writes.count(bucket, window));
  }
  ranks.push(writes.count(`${acc.accountId}:test`, window));
  assert.deepEqual(await Promise.all(ranks), [1, 2, 3, 4, 5, 6, 1]);
  assert.deepEqual((await Promise.all(stored)).map((s) => s.size), [0, 0, 0, 0, 0]);
  assert.deepEqual(names, ['add_to_rate_windows', 'count_and_insert_sends'], 'the queued counts and sends were written by one statement');
  assert.equal(await windowTotal(bucket), 6);
  assert.equal(await messagesOf(acc.accountId), 5);
});

test('request writes: a send the database refuses fails alone; the counts that rode with it are counted once', async () => {
  const { acc, domainId, names, writes, window, bucket } = await riderSetup('Refused', 'refused.test');
  const ranks: Promise<number>[] = [writes.count(bucket, window)];
  const good = writes.storeSend(...Object.values(sendOf(acc.accountId, domainId, 'ok@example.net')) as [MessageRow[], string[], SentEventRow[]]);
  ranks.push(writes.count(bucket, window));
  // PostgreSQL refuses NUL in text: this send's statement fails, and the batch is split.
  const bad = writes.storeSend(...Object.values(sendOf(acc.accountId, domainId, 'bad@example.net', '<p>\u0000</p>')) as [MessageRow[], string[], SentEventRow[]]);
  ranks.push(writes.count(bucket, window), writes.count(bucket, window));
  await assert.rejects(bad);
  assert.equal((await good).size, 0);
  assert.deepEqual(await Promise.all(ranks), [1, 2, 3, 4]);
  assert.ok(names.includes('count_and_insert_sends'), names.join());
  assert.equal(await windowTotal(bucket), 4, 'no count lost or doubled by the failed statement');
  assert.equal(await messagesOf(acc.accountId), 1);
});

test('request writes: with sends and reads through two API processes at once, the 600th request passes and the 601st is 429', async () => {
  clock.set('2026-11-20T10:02:10.000Z');
  const acc = await sender('Mixed', 'mixed.test');
  const apps = [first.app, second.app];
  const answers = [];
  for (let i = 0; i < 599; i += 40) {
    answers.push(...await Promise.all(Array.from({ length: Math.min(40, 599 - i) }, (_, j) => {
      const n = i + j;
      return n % 3 === 0 ? apps[n % 2].inject({ url: '/api/v1/me', headers: acc.live }) : send(apps[n % 2], acc, `m${n}@example.net`, 'a@mixed.test');
    })));
  }
  assert.deepEqual([...new Set(answers.map((r) => r.statusCode))].sort(), [200, 202]);
  const remaining = answers.map((r) => Number(r.headers['ratelimit-remaining'])).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 599 }, (_, i) => i + 1), 'every rank handed out once');
  const r600 = await send(first.app, acc, 'last@example.net', 'a@mixed.test');
  assert.equal(r600.statusCode, 202);
  assert.equal(r600.headers['ratelimit-remaining'], '0');
  const r601 = await send(second.app, acc, 'over@example.net', 'a@mixed.test');
  assert.equal(r601.statusCode, 429);
  assert.equal(r601.json().code, 'rate_limited');
  assert.equal(r601.headers['retry-after'], '50');
  assert.equal(await windowTotal(`${acc.accountId}:live`), 601);
  assert.equal(await messagesOf(acc.accountId), 599 - 200 + 1);
});

test('request writes: a HEAD request (the twin Fastify adds to a GET route) is authenticated and counted once', async () => {
  clock.set('2026-11-20T10:03:10.000Z');
  const acc = await createTestAccount(pool, 'Heads');
  assert.equal((await first.app.inject({ method: 'HEAD', url: '/api/v1/me' })).statusCode, 401);
  const head = await first.app.inject({ method: 'HEAD', url: '/api/v1/me', headers: acc.live });
  assert.equal(head.statusCode, 200);
  assert.equal(head.headers['ratelimit-remaining'], '599');
  assert.equal((await first.app.inject({ url: '/api/v1/me', headers: acc.live })).headers['ratelimit-remaining'], '598');
  assert.equal(await windowTotal(`${acc.accountId}:live`), 2);
});
