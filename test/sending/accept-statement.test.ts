import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createDomain, dnsTargetsOf, forceVerifyDomain } from '../../src/domain/domains/domains.js';
import { bootApp, createTestAccount, type TestAccount } from '../helpers/app.js';

/**
 * The send API stores concurrent accepts with one statement that also checks the suppression
 * list and wakes the workers (db/queries/messages.ts insertSendsUnlessSuppressed). These sends
 * run concurrently, so they share statements: each must still get its own answer.
 */

const { app, pool, clock, config } = await bootApp();

async function accountWithDomain(name: string, domainName: string): Promise<TestAccount> {
  const account = await createTestAccount(pool, name);
  const domain = await createDomain(pool, { accountId: account.accountId, name: domainName, now: clock.now() }, { secret: config.secret, targets: dnsTargetsOf(config) });
  await forceVerifyDomain(pool, domain.id, clock.now());
  return account;
}

const acme = await accountWithDomain('Acme', 'acme.test');
const globex = await accountWithDomain('Globex', 'globex.test');

const send = (account: TestAccount, from: string, body: Record<string, unknown>) =>
  app.inject({
    method: 'POST', url: '/api/v1/emails', headers: { ...account.live, 'content-type': 'application/json' },
    payload: { from: { email: from }, subject: 'Hi {{ name | there }}', html: '<p>Hi {{ name | there }}</p>', ...body },
  });

async function rowsOf(accountId: string): Promise<{ to_email: string; status: string; last_response: string | null; sent_events: number }[]> {
  const { rows } = await pool.query(
    `SELECT m.to_email, m.status, m.last_response, (SELECT count(*)::int FROM events e WHERE e.message_id = m.id AND e.type = 'sent') AS sent_events
       FROM messages m WHERE m.account_id = $1 ORDER BY m.to_email`,
    [accountId],
  );
  return rows;
}

test('concurrent sends: suppression is per account and per recipient, each send answered on its own', async () => {
  for (const email of ['gone@example.net', 'Muted@Example.net']) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { email } });
    assert.equal(res.statusCode, 201, res.body);
  }
  const sends = await Promise.all([
    send(acme, 'a@acme.test', { to: 'gone@example.net' }),
    send(acme, 'a@acme.test', { to: 'ok1@example.net' }),
    send(globex, 'g@globex.test', { to: 'gone@example.net' }), // suppressed for Acme only
    send(acme, 'a@acme.test', { to: 'ok2@example.net', cc: ['GONE@example.net'], bcc: ['muted@example.net'] }),
    send(acme, 'a@acme.test', { to: 'muted@EXAMPLE.net', cc: ['gone@example.net'] }),
    send(acme, 'a@acme.test', { to: 'ok3@example.net' }),
  ]);
  assert.deepEqual(sends.map((r) => r.statusCode), [422, 202, 202, 202, 422, 202]);
  assert.equal(sends[0].json().code, 'recipient_suppressed');
  assert.deepEqual(sends[0].json().errors, [{ field: 'to', message: 'is suppressed' }]);
  assert.deepEqual(sends[4].json().errors.map((e: { field: string }) => e.field), ['to', 'cc[0]']);
  for (const i of [1, 2, 3, 5]) assert.equal(sends[i].json().status, 'queued');

  assert.deepEqual(await rowsOf(acme.accountId), [
    { to_email: 'GONE@example.net', status: 'suppressed', last_response: 'not sent: the address is on the suppression list', sent_events: 0 },
    { to_email: 'muted@example.net', status: 'suppressed', last_response: 'not sent: the address is on the suppression list', sent_events: 0 },
    { to_email: 'ok1@example.net', status: 'queued', last_response: null, sent_events: 1 },
    { to_email: 'ok2@example.net', status: 'queued', last_response: null, sent_events: 1 },
    { to_email: 'ok3@example.net', status: 'queued', last_response: null, sent_events: 1 },
  ], 'the refused sends stored nothing; suppressed copies are stored without a sent event');
  assert.deepEqual(await rowsOf(globex.accountId), [{ to_email: 'gone@example.net', status: 'queued', last_response: null, sent_events: 1 }]);
});

test('concurrent sends: a scheduled send and a suppressed copy keep their statuses; the workers are woken by the commit', async () => {
  const listener = await pool.connect();
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.channel));
  await listener.query('LISTEN postline_messages');
  try {
    const at = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const [scheduled, plain] = await Promise.all([
      send(acme, 'a@acme.test', { to: 'later@example.net', cc: ['gone@example.net'], scheduledAt: at }),
      send(acme, 'a@acme.test', { to: 'now@example.net' }),
    ]);
    assert.equal(scheduled.json().status, 'scheduled');
    assert.equal(plain.json().status, 'queued');
    const { rows } = await pool.query(`SELECT to_email, status, scheduled_at FROM messages WHERE to_email IN ('later@example.net', 'now@example.net') OR (to_email = 'gone@example.net' AND group_id = $1) ORDER BY to_email`, [scheduled.json().id]);
    assert.deepEqual(rows.map((r) => [r.to_email, r.status, r.scheduled_at?.toISOString() ?? null]), [
      ['gone@example.net', 'suppressed', at],
      ['later@example.net', 'scheduled', at],
      ['now@example.net', 'queued', null],
    ]);
    for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setImmediate(r));
    await listener.query('SELECT 1'); // a round trip delivers any notification already sent
    assert.ok(heard.includes('postline_messages'), 'the accepting statement notified the workers');
  } finally {
    listener.release();
  }
});

test('concurrent sends: the statement counts its sent events into stats_daily exactly as the events rollup would', async () => {
  const rollupAccount = await accountWithDomain('Rolled up', 'rolled.test');
  const ownAccount = await accountWithDomain('Counted', 'counted.test');
  const sends = [
    { to: 's1@example.net', tags: ['welcome', 'a'] },
    { to: 's2@example.net', tags: ['a', 'a'] }, // a tag named twice counts twice, as the rollup does
    { to: 's3@example.net', cc: ['s4@example.net'], bcc: ['s5@example.net'], tags: ['b'] },
    { to: 's6@example.net' },
  ];
  // The reference: each send alone through a one-statement-per-send path the events rollup counts
  // (a quota on the account takes sends off the group commit).
  await pool.query('UPDATE accounts SET monthly_quota = 1000000 WHERE id = $1', [rollupAccount.accountId]);
  for (const body of sends) assert.equal((await send(rollupAccount, 'a@rolled.test', body)).statusCode, 202);
  const results = await Promise.all(sends.map((body) => send(ownAccount, 'a@counted.test', body)));
  assert.deepEqual(results.map((r) => r.statusCode), [202, 202, 202, 202]);
  const counts = async (accountId: string) => (await pool.query(
    `SELECT scope, day::text, sum(sent)::int AS sent, sum(delivered + opens + clicks)::int AS other FROM stats_daily WHERE account_id = $1 GROUP BY 1, 2 ORDER BY 1, 2`,
    [accountId],
  )).rows;
  const reference = await counts(rollupAccount.accountId);
  assert.deepEqual(reference.map((r) => [r.scope, r.sent]), [['', 6], ['t:a', 3], ['t:b', 3], ['t:welcome', 1]]);
  assert.deepEqual(await counts(ownAccount.accountId), reference);
  const stats = await app.inject({ url: '/api/v1/stats?tag=a', headers: ownAccount.live });
  assert.equal(stats.statusCode, 200, stats.body);
});

test('concurrent sends: html and text bodies are stored exactly as the one-send statement stores them, whatever characters they hold', async () => {
  // The accept statement carries the bodies in two text arrays beside the rows' JSON
  // (db/queries/messages.ts acceptParams); the quota path still stores whole rows as JSON.
  const reference = await accountWithDomain('Bodies one by one', 'bodies-ref.test');
  const grouped = await accountWithDomain('Bodies grouped', 'bodies.test');
  await pool.query('UPDATE accounts SET monthly_quota = 1000000 WHERE id = $1', [reference.accountId]);
  const tricky = 'quotes " and \' backslashes \\ \\\\ \\" braces {a,b} {"k": [1, "NULL"]} NULL, tab\there\r\nCRLF \u2028 é 😀 \ud835\udc00 end\\';
  const sends = [
    { to: 'b1@example.net', html: `<p title="${tricky.replace(/"/g, '&quot;')}">{{ name }} ${tricky}</p>`, text: `Hi {{ name }} ${tricky}`, variables: { name: 'A "quoted" \\ name' } },
    { to: 'b2@example.net', html: '<p>html only, text derived by the worker: "x" \\ y</p>' },
    { to: 'b3@example.net', html: undefined, text: 'NULL' },
    { to: 'b4@example.net', html: 'NULL', text: '{}' },
    { to: 'b5@example.net', cc: ['b6@example.net'], bcc: ['b7@example.net'], html: `<b>${tricky}</b>`, text: ',' },
    { to: 'b8@example.net', html: `<p>${'\\"{},'.repeat(2000)}</p>` },
  ];
  const bodies = () => sends.map(({ html, ...rest }) => ({ ...rest, ...(html === undefined ? { html: undefined } : { html }), subject: 'Bodies' }));
  for (const body of bodies()) assert.equal((await send(reference, 'a@bodies-ref.test', body)).statusCode, 202);
  const results = await Promise.all(bodies().map((body) => send(grouped, 'a@bodies.test', body)));
  assert.deepEqual(results.map((r) => r.statusCode), sends.map(() => 202), results.map((r) => r.body).join('\n'));
  const stored = async (accountId: string) => (await pool.query(
    `SELECT to_email, status, subject, html, text, cc, bcc, recipient_type, header_to, headers, attachments, tags, track_opens, track_clicks
       FROM messages WHERE account_id = $1 ORDER BY to_email`,
    [accountId],
  )).rows;
  const mine = await stored(grouped.accountId);
  assert.deepEqual(mine, await stored(reference.accountId));
  const byTo = new Map(mine.map((r) => [r.to_email, r]));
  assert.equal(byTo.get('b1@example.net').text, `Hi A "quoted" \\ name ${tricky}`);
  assert.equal(byTo.get('b2@example.net').text, null);
  assert.equal(byTo.get('b3@example.net').html, null);
  assert.equal(byTo.get('b3@example.net').text, 'NULL');
  assert.equal(byTo.get('b4@example.net').html, 'NULL');
  assert.equal(byTo.get('b5@example.net').html, `<b>${tricky}</b>`);
  assert.equal(byTo.get('b6@example.net').html, null, 'a cc copy reads its content from the send\'s to row');
  assert.equal(byTo.get('b8@example.net').html, `<p>${'\\"{},'.repeat(2000)}</p>`);
});
