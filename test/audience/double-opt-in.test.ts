import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withTransaction } from '../../src/db/pool.js';
import {
  CONFIRMATION_TTL_DAYS, confirmationUrl, markConfirmationsSent, pendingConfirmations, type PendingConfirmation,
} from '../../src/domain/audience/double-opt-in.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { client, makeList, makeSubscriber } from './helpers.js';

const { app, pool, config } = await bootApp();
const acme = await createTestAccount(pool);
const api = client(app, acme.live);
const secrets = { secret: config.secret, baseUrl: config.baseUrl };

/** What the mailer will do: take pending rows and close them in one transaction. */
async function takePending(): Promise<PendingConfirmation[]> {
  return withTransaction(pool, async (tx) => {
    const rows = await pendingConfirmations(tx, secrets, 1000);
    await markConfirmationsSent(tx, rows.map((r) => ({ id: r.id, messageId: null })));
    return rows;
  });
}

function pathOf(url: string): string {
  return new URL(url).pathname;
}

test('double opt-in: a new member of a double opt-in list is unconfirmed and a confirmation is queued', async () => {
  await takePending();
  // The template must be one of the account's (references are checked).
  const template = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { name: 'Confirm', subject: 'Confirm', html: '<a href="{{ confirm_url }}">Confirm</a>' } });
  const templateId = template.json().id as string;
  const list = await makeList(app, acme.live, { name: 'Weekly', doubleOptIn: true, confirmationTemplateId: templateId });
  const sub = await makeSubscriber(app, acme.live, { email: 'doi@example.com', name: 'Dee', list });
  assert.equal(sub.status, 'unconfirmed');
  const pending = await takePending();
  assert.equal(pending.length, 1);
  assert.equal(pending[0].email, 'doi@example.com');
  assert.equal(pending[0].listName, 'Weekly');
  assert.equal(pending[0].templateId, templateId);
  assert.ok(pending[0].confirmUrl.startsWith(`${config.baseUrl}/confirm/`));
  assert.deepEqual(await takePending(), [], 'closed rows are not handed out again');
});

test('double opt-in: following the link makes the subscriber active; following it again still says confirmed', async () => {
  await takePending();
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'follow@example.com', list });
  const [row] = await takePending();
  const res = await app.inject({ url: pathOf(row.confirmUrl) });
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /text\/html/);
  assert.ok(res.body.startsWith('<!doctype html>'), 'HTML as is, not JSON-encoded');
  assert.match(res.body, /confirmed/);
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).body.status, 'active');
  const again = await app.inject({ url: pathOf(row.confirmUrl) });
  assert.equal(again.statusCode, 200);
  assert.match(again.body, /confirmed/);
});

test('double opt-in: a tampered, foreign or expired link is 404 and confirms nothing', async () => {
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'tamper@example.com', list });
  const good = pathOf(confirmationUrl(secrets, sub.id, list));
  const tampered = good.slice(0, -3) + (good.endsWith('AAA') ? 'BBB' : 'AAA');
  const foreign = pathOf(confirmationUrl({ ...secrets, secret: 'another-secret-0123456789' }, sub.id, list));
  const expired = pathOf(confirmationUrl(secrets, sub.id, list, new Date(Date.now() - (CONFIRMATION_TTL_DAYS + 1) * 86_400_000)));
  for (const path of [tampered, foreign, expired, '/confirm/not-a-token']) {
    const res = await app.inject({ url: path });
    assert.equal(res.statusCode, 404, path);
    assert.match(res.body, /not valid/);
  }
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).body.status, 'unconfirmed');
});

test('double opt-in: the link needs no API key', async () => {
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'nokey@example.com', list });
  const res = await app.inject({ url: pathOf(confirmationUrl(secrets, sub.id, list)) });
  assert.equal(res.statusCode, 200);
});

test('double opt-in: a link for a subscriber deleted or removed from the list is 404', async () => {
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const removed = await makeSubscriber(app, acme.live, { email: 'removed@example.com', list });
  await api.patch(`/api/v1/subscribers/${removed.id}`, { removeLists: [list] });
  assert.equal((await app.inject({ url: pathOf(confirmationUrl(secrets, removed.id, list)) })).statusCode, 404);
  const deleted = await makeSubscriber(app, acme.live, { email: 'deleted@example.com', list });
  await api.delete(`/api/v1/subscribers/${deleted.id}`);
  assert.equal((await app.inject({ url: pathOf(confirmationUrl(secrets, deleted.id, list)) })).statusCode, 404);
});

test('double opt-in: a subscriber who unsubscribed meanwhile stays unsubscribed when following the link', async () => {
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'changed-mind@example.com', list });
  await api.patch(`/api/v1/subscribers/${sub.id}`, { status: 'unsubscribed' });
  const res = await app.inject({ url: pathOf(confirmationUrl(secrets, sub.id, list)) });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /not active/);
  assert.equal((await api.get(`/api/v1/subscribers/${sub.id}`)).body.status, 'unsubscribed');
});

test('double opt-in: an already active subscriber joining a double opt-in list stays active and gets no mail', async () => {
  await takePending();
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  await makeSubscriber(app, acme.live, { email: 'already@example.com' });
  const res = await api.post('/api/v1/subscribers', { email: 'already@example.com', list });
  assert.equal(res.status, 200);
  assert.equal(res.body.status, 'active');
  assert.deepEqual(await takePending(), []);
});

test('double opt-in: an explicit status active skips confirmation (pre-confirmed contacts)', async () => {
  await takePending();
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'preconfirmed@example.com', list, status: 'active' });
  assert.equal(sub.status, 'active');
  assert.deepEqual(await takePending(), []);
});

test('double opt-in: re-posting the signup does not queue a second mail while one is pending or just sent', async () => {
  await takePending();
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  await makeSubscriber(app, acme.live, { email: 'repost@example.com', list });
  await makeSubscriber(app, acme.live, { email: 'repost@example.com', list });
  assert.equal((await takePending()).length, 1);
  await makeSubscriber(app, acme.live, { email: 'repost@example.com', list });
  assert.equal((await takePending()).length, 0, 'sent within the last hour');
  await pool.query(`UPDATE subscriber_confirmations SET created_at = created_at - interval '2 hours'`);
  await makeSubscriber(app, acme.live, { email: 'repost@example.com', list });
  assert.equal((await takePending()).length, 1, 'resent after the interval');
});

test('double opt-in: a test key queues no confirmation', async () => {
  await takePending();
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const res = await client(app, acme.test).post('/api/v1/subscribers', { email: 'testkey-doi@example.com', list });
  assert.equal(res.status, 201);
  assert.equal(res.body.status, 'unconfirmed');
  assert.deepEqual(await takePending(), []);
});

test('double opt-in: confirmations of a subscriber no longer unconfirmed are not handed to the mailer', async () => {
  await takePending();
  const list = await makeList(app, acme.live, { doubleOptIn: true });
  const sub = await makeSubscriber(app, acme.live, { email: 'moot@example.com', list });
  await api.patch(`/api/v1/subscribers/${sub.id}`, { status: 'active' });
  assert.deepEqual(await takePending(), []);
});
