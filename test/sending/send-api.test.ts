import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { suppress } from '../../src/domain/suppression.js';
import { createTemplate } from '../../src/domain/stored-templates.js';
import { startWorkers } from '../../src/workers/index.js';
import { createTestAccount } from '../helpers/app.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

const clock = new ManualClock('2026-11-30T23:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, acme } = env;

async function count(table: string, accountId = acme.accountId): Promise<number> {
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table} WHERE account_id = $1`, [accountId]);
  return rows[0].n;
}

test('send: live key stores the message and a sent event together and answers 202 queued', async () => {
  const [m0, e0] = [await count('messages'), await count('events')];
  const res = await env.send(basicEmail());
  assert.equal(res.statusCode, 202);
  const body = res.json();
  assert.match(body.id, /^msg_[0-9a-f]{32}$/);
  assert.deepEqual({ ...body, id: undefined }, { id: undefined, status: 'queued', to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Hello Ada', warnings: [], sandbox: false });
  assert.equal(await count('messages'), m0 + 1);
  assert.equal(await count('events'), e0 + 1);
  const { rows } = await pool.query('SELECT type, message_id FROM events WHERE message_id = $1', [body.id]);
  assert.deepEqual(rows, [{ type: 'sent', message_id: body.id }]);
});

test('send: test key validates and renders only: the live answer\'s status and shape with sandbox: true, nothing stored, counted or recorded', async () => {
  const [m0, e0] = [await count('messages'), await count('events')];
  const res = await env.send(basicEmail(), acme.test);
  assert.equal(res.statusCode, 202);
  assert.deepEqual(Object.keys(res.json()).sort(), ['id', 'sandbox', 'status', 'subject', 'to', 'warnings']);
  assert.equal(res.json().status, 'queued');
  const body = res.json();
  assert.equal(body.sandbox, true);
  assert.match(body.id, /^sbx_/);
  assert.equal(body.to, `ada@${RECIPIENT_DOMAIN}`);
  assert.equal(body.subject, 'Hello Ada');
  assert.equal(await count('messages'), m0);
  assert.equal(await count('events'), e0);
  const bad = await env.send(basicEmail({ to: 'not-an-address' }), acme.test);
  assert.equal(bad.statusCode, 422, 'test keys still validate');
});

test('send: unverified sender domain is 422 sender_domain_unverified', async () => {
  const res = await env.send(basicEmail({ from: { email: 'me@elsewhere.test' } }));
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().code, 'sender_domain_unverified');
  const other = await createTestAccount(pool, 'Other');
  const foreign = await env.send(basicEmail(), other.live);
  assert.equal(foreign.json().code, 'sender_domain_unverified', "another account's verified domain doesn't count");
});

test('send: suppressed recipient is 422 recipient_suppressed, matched case-insensitively', async () => {
  await app.inject({ method: 'POST', url: '/api/v1/suppression', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { email: `Blocked@${RECIPIENT_DOMAIN}`, reason: 'manual' } });
  const res = await env.send(basicEmail({ to: `blocked@${RECIPIENT_DOMAIN.toUpperCase()}` }));
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().code, 'recipient_suppressed');
});

test('send: concurrent sends share batched suppression lookups, each answered for its own account and recipients', async () => {
  const other = await createTestAccount(pool, 'Other suppressor');
  for (let i = 0; i < 10; i++) await suppress(pool, other.accountId, `batch${i}@${RECIPIENT_DOMAIN}`);
  for (let i = 0; i < 10; i += 2) await suppress(pool, acme.accountId, `Batch${i}@${RECIPIENT_DOMAIN}`);
  const sends = await Promise.all(Array.from({ length: 10 }, (_, i) => env.send(basicEmail({ to: `batch${i}@${RECIPIENT_DOMAIN}` }))));
  // Only acme's own list counts: the even addresses are refused, the odd ones (suppressed by
  // the other account only) accepted, though all ten lookups may have gone in one query.
  assert.deepEqual(sends.map((r) => r.statusCode), Array.from({ length: 10 }, (_, i) => (i % 2 ? 202 : 422)));
  assert.ok(sends.filter((_, i) => i % 2 === 0).every((r) => r.json().code === 'recipient_suppressed'));
  const cc = await env.send(basicEmail({ to: `batch1@${RECIPIENT_DOMAIN}`, cc: [`batch2@${RECIPIENT_DOMAIN}`, `batch3@${RECIPIENT_DOMAIN}`] }));
  assert.equal(cc.statusCode, 202);
  const { rows } = await pool.query('SELECT to_email, status FROM messages WHERE coalesce(group_id, id) = $1 ORDER BY to_email', [cc.json().id]);
  assert.deepEqual(rows.map((r) => [r.to_email, r.status]), [[`batch1@${RECIPIENT_DOMAIN}`, 'queued'], [`batch2@${RECIPIENT_DOMAIN}`, 'suppressed'], [`batch3@${RECIPIENT_DOMAIN}`, 'queued']]);
});

test('send: CR/LF is refused in subject, from name, custom headers and addresses', async () => {
  const cases = [
    basicEmail({ subject: 'Hi\r\nBcc: victim@example.com' }),
    basicEmail({ subject: 'Hi {{ x }}', variables: { x: 'a\r\nBcc: v@example.com' } }),
    basicEmail({ from: { email: 'hello@acme.test', name: 'Acme\r\nBcc: v@example.com' } }),
    basicEmail({ headers: { 'X-Campaign': 'a\r\nBcc: v@example.com' } }),
    basicEmail({ headers: { 'X-Bad\r\nBcc': 'x' } }),
    basicEmail({ to: 'ada@example.net\r\nBcc: v@example.com' }),
    basicEmail({ replyTo: 'r@example.net\nBcc: v@example.com' }),
    basicEmail({ cc: ['c@example.net\r\n'] }),
  ];
  for (const [i, body] of cases.entries()) {
    const res = await env.send(body);
    if (i === 1) {
      // A variable's CR/LF in a subject is folded to a space by the template language.
      assert.equal(res.statusCode, 202, 'subject rendering strips CR/LF');
      assert.doesNotMatch(res.json().subject, /[\r\n]/);
      continue;
    }
    assert.equal(res.statusCode, 422, `case ${i}: ${res.body}`);
    assert.equal(res.json().code, 'validation_failed');
  }
});

test('send: reserved headers cannot be overridden', async () => {
  for (const name of ['From', 'DKIM-Signature', 'List-Unsubscribe', 'Message-ID', 'Content-Type']) {
    const res = await env.send(basicEmail({ headers: { [name]: 'x' } }));
    assert.equal(res.statusCode, 422, name);
  }
  assert.equal((await env.send(basicEmail({ headers: { 'X-Campaign': 'nov' } }))).statusCode, 202);
});

test('send: body needs html, text or templateId; subject must be present', async () => {
  const noBody = await env.send({ to: `a@${RECIPIENT_DOMAIN}`, from: { email: 'hello@acme.test' }, subject: 'x' });
  assert.equal(noBody.statusCode, 422);
  const noSubject = await env.send({ to: `a@${RECIPIENT_DOMAIN}`, from: { email: 'hello@acme.test' }, text: 'x' });
  assert.equal(noSubject.statusCode, 422);
  assert.equal(noSubject.json().errors[0].field, 'subject');
});

test('send: a template supplies subject and html; unknown template is template_error; syntax errors too', async () => {
  const tpl = await createTemplate(pool, acme.accountId, { name: 'Welcome', subject: 'Welcome {{ name }}', html: '<p>[for i in items]{{ i }} [/for]</p>' });
  const res = await env.send({ to: `t@${RECIPIENT_DOMAIN}`, from: { email: 'hello@acme.test' }, templateId: tpl.id, variables: { name: 'Ada', items: ['a', 'b'] } });
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.json().subject, 'Welcome Ada');
  const stored = (await app.inject({ url: `/api/v1/emails/${res.json().id}`, headers: acme.live })).json();
  assert.equal(stored.html, '<p>a b </p>');
  const unknown = await env.send({ to: `t@${RECIPIENT_DOMAIN}`, from: { email: 'hello@acme.test' }, templateId: 'tpl_00000000000000000000000000000000' });
  assert.equal(unknown.json().code, 'template_error');
  const broken = await env.send(basicEmail({ html: '<p>[for x in y]never closed</p>' }));
  assert.equal(broken.statusCode, 422);
  assert.equal(broken.json().code, 'template_error');
  assert.equal(typeof broken.json().line, 'number');
});

test('send: limits: subject 998 bytes ok, 999 refused; scheduledAt up to 30 days', async () => {
  assert.equal((await env.send(basicEmail({ subject: 's'.repeat(998) }))).statusCode, 202);
  assert.equal((await env.send(basicEmail({ subject: 's'.repeat(999) }))).statusCode, 422);
  const in30 = new Date(clock.now().getTime() + 30 * 86_400_000).toISOString();
  const in30plus = new Date(clock.now().getTime() + 30 * 86_400_000 + 1000).toISOString();
  assert.equal((await env.send(basicEmail({ scheduledAt: in30 }))).statusCode, 202);
  assert.equal((await env.send(basicEmail({ scheduledAt: in30plus }))).statusCode, 422);
  assert.equal((await env.send(basicEmail({ attachments: [{ filename: 'a.txt', content: 'not base64!' }] }))).statusCode, 422);
  assert.equal((await env.send(basicEmail({ attachments: [{ filename: 'a.txt', content: Buffer.from('hello').toString('base64') }] }))).statusCode, 202);
});

test('send: monthly quota: the last message fits, the next is 429 quota_exceeded with Retry-After to the 1st', async () => {
  const small = await createTestAccount(pool, 'Small', 3);
  const { createDomain, dnsTargetsOf, forceVerifyDomain } = await import('../../src/domain/domains/domains.js');
  const d = await createDomain(pool, { accountId: small.accountId, name: 'small.test', now: clock.now() }, { secret: env.config.secret, targets: dnsTargetsOf(env.config) });
  await forceVerifyDomain(pool, d.id, clock.now());
  const mail = basicEmail({ from: { email: 'hi@small.test' } });
  for (let i = 0; i < 3; i++) assert.equal((await env.send(mail, small.live)).statusCode, 202);
  const over = await env.send(mail, small.live);
  assert.equal(over.statusCode, 429);
  assert.equal(over.json().code, 'quota_exceeded');
  assert.equal(over.headers['retry-after'], '3600', 'one hour until 2026-12-01T00:00Z');
  assert.equal((await env.send(mail, small.test)).statusCode, 202, 'test keys do not count');
  clock.advance(3600_000);
  assert.equal((await env.send(mail, small.live)).statusCode, 202, 'a new month, a new quota');
  clock.set('2026-11-30T23:00:00.000Z');
});

test('send: batch answers each item on its own and stores the accepted ones', async () => {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/emails/batch',
    headers: { ...acme.live, 'content-type': 'application/json' },
    payload: { emails: [basicEmail({ to: `b1@${RECIPIENT_DOMAIN}` }), basicEmail({ to: 'broken' }), basicEmail({ to: `b3@${RECIPIENT_DOMAIN}` })] },
  });
  assert.equal(res.statusCode, 200);
  const data = res.json().data;
  assert.equal(data.length, 3);
  assert.equal(data[0].status, 'queued');
  assert.equal(data[1].error.code, 'validation_failed');
  assert.equal(data[1].error.status, 422);
  assert.equal(data[2].status, 'queued');
  const tooMany = await app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { emails: Array(501).fill(basicEmail()) } });
  assert.equal(tooMany.statusCode, 422);
});

test('emails: list with filters and pagination; another account cannot read them', async () => {
  const tagged = await env.send(basicEmail({ to: `tag@${RECIPIENT_DOMAIN}`, tags: ['nov'] }));
  const list = (await app.inject({ url: '/api/v1/emails?tag=nov', headers: acme.live })).json();
  assert.deepEqual(list.data.map((m: { id: string }) => m.id), [tagged.json().id]);
  const page1 = (await app.inject({ url: '/api/v1/emails?limit=2', headers: acme.live })).json();
  const page2 = (await app.inject({ url: `/api/v1/emails?limit=2&cursor=${page1.nextCursor}`, headers: acme.live })).json();
  assert.equal(page1.data.length, 2);
  assert.ok(page2.data[0].id < page1.data[1].id, 'desc order continues');
  const other = await createTestAccount(pool, 'Snoop');
  assert.equal((await app.inject({ url: `/api/v1/emails/${tagged.json().id}`, headers: other.live })).statusCode, 404);
  assert.equal((await app.inject({ url: '/api/v1/emails', headers: other.live })).json().data.length, 0);
});

test('send: with the worker role running, an accepted message wakes delivery at once rather than waiting for the poll', async () => {
  const realClockEnv = await startMailEnv();
  // A poll of a minute: a message that arrives in seconds was woken by the API's notification.
  // (Wall time under a loaded CI is no measure of speed; bench:send-api measures latency.)
  const workers = await startWorkers(
    { config: realClockEnv.config, pool: realClockEnv.pool, clock: realClockEnv.clock, log: pino({ level: 'silent' }) },
    { deliveryPollMs: 60_000 },
  );
  try {
    const t0 = Date.now();
    const res = await realClockEnv.send(basicEmail());
    assert.equal(res.statusCode, 202);
    await realClockEnv.mx.waitForMessages(1, 20_000);
    const ms = Date.now() - t0;
    assert.ok(ms < 20_000, `took ${ms} ms`);
  } finally {
    await workers.stop();
  }
});
