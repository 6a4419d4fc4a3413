import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { Postline, PostlineError, verifyWebhook } from '../../packages/sdk/src/index.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { startSdkServer } from './server.js';

const server = await startSdkServer();
const postline = new Postline({ apiKey: server.acme.liveKey, baseUrl: server.baseUrl });
const email = { to: 'ada@example.net', from: { email: 'hello@acme.test', name: 'Acme' }, subject: 'Hi {{ name }}', text: 'Hello', variables: { name: 'Ada' } };

test('sdk: emails.send queues a message and emails.get shows it', async () => {
  const sent = await postline.emails.send(email);
  assert.equal(sent.sandbox, false);
  assert.ok('status' in sent && sent.status === 'queued');
  assert.equal(sent.subject, 'Hi Ada');
  const got = await postline.emails.get(sent.id);
  assert.equal(got.id, sent.id);
  assert.deepEqual(got.recipients.map((r) => r.email), ['ada@example.net']);
});

test('sdk: a test key answers sandbox: true and sends nothing', async () => {
  const sandbox = new Postline({ apiKey: server.acme.testKey, baseUrl: server.baseUrl });
  const res = await sandbox.emails.send(email);
  assert.equal(res.sandbox, true);
  assert.match(res.id, /^sbx_/);
});

test('sdk: a refusal is a PostlineError with status, the problem code and errors[]', async () => {
  const err = await postline.emails.send({ ...email, to: 'not an address' }).catch((e: unknown) => e);
  assert.ok(err instanceof PostlineError);
  assert.equal(err.status, 422);
  assert.equal(err.code, 'validation_failed');
  assert.deepEqual(err.errors.map((e) => e.field), ['to']);
  assert.match(err.requestId ?? '', /^req_/);
  const unverified = await postline.emails.send({ ...email, from: { email: 'me@elsewhere.test' } }).catch((e: unknown) => e);
  assert.ok(unverified instanceof PostlineError && unverified.code === 'sender_domain_unverified');
  const wrongKey = new Postline({ apiKey: 'sk_live_' + 'z'.repeat(43), baseUrl: server.baseUrl });
  const unauthorized = await wrongKey.account.get().catch((e: unknown) => e);
  assert.ok(unauthorized instanceof PostlineError && unauthorized.status === 401 && unauthorized.code === 'unauthorized');
});

test('sdk: for await over subscribers.list({ list }) walks every page', async () => {
  const list = await postline.lists.create({ name: 'Readers' });
  const other = await postline.lists.create({ name: 'Others' });
  for (let i = 0; i < 7; i++) await postline.subscribers.upsert({ email: `reader${i}@example.net`, list: list.id });
  await postline.subscribers.upsert({ email: 'outsider@example.net', list: other.id });
  const seen: string[] = [];
  for await (const s of postline.subscribers.list({ list: list.id, limit: 3 })) seen.push(s.email);
  assert.deepEqual(seen.sort(), Array.from({ length: 7 }, (_, i) => `reader${i}@example.net`));
  let pages = 0;
  for await (const page of postline.subscribers.list({ list: list.id, limit: 3 }).pages()) {
    pages++;
    assert.ok(page.data.length <= 3);
  }
  assert.equal(pages, 3);
});

test('sdk: campaigns.create makes a draft that campaigns.get returns', async () => {
  const list = await postline.lists.create({ name: 'Newsletter' });
  const campaign = await postline.campaigns.create({
    name: 'November', subject: 'News', from: { email: 'news@acme.test' }, html: '<p>News</p>', audience: { lists: [list.id] },
  });
  assert.equal(campaign.status, 'draft');
  assert.equal((await postline.campaigns.get(campaign.id)).name, 'November');
  assert.ok((await postline.campaigns.list().all()).some((c) => c.id === campaign.id));
});

test('sdk: verifyWebhook accepts a real delivery from Postline and refuses a changed body, another secret or a malformed header', async () => {
  const receiver = await startWebhookReceiver();
  after(() => receiver.close());
  const hook = await postline.webhooks.create({ url: receiver.url, events: ['delivered'] });
  await postline.webhooks.test(hook.id);
  await receiver.waitFor(1);
  const [req] = receiver.requests;
  const signature = req.headers['x-svc-signature'] as string;
  assert.equal(await verifyWebhook(req.rawBody, signature, hook.secret), true);
  assert.equal(await verifyWebhook(req.rawBody.toString(), signature, hook.secret), true, 'a string body verifies too');
  assert.equal(await verifyWebhook(Buffer.concat([req.rawBody, Buffer.from(' ')]), signature, hook.secret), false);
  assert.equal(await verifyWebhook(req.rawBody, signature, hook.secret + 'x'), false);
  assert.equal(await verifyWebhook(req.rawBody, signature, ['whsec_old', hook.secret]), true, 'either secret during a rotation');
  assert.equal(await verifyWebhook(req.rawBody, signature.toUpperCase(), hook.secret), false);
  assert.equal(await verifyWebhook(req.rawBody, undefined, hook.secret), false);
  assert.equal(await verifyWebhook(req.rawBody, 'sha256=' + '0'.repeat(64), hook.secret), false);
});

test('sdk: every covered method reaches its route (no 404 from a wrong path)', async () => {
  const domains = await postline.domains.list().all();
  assert.ok(domains.some((d) => d.name === 'acme.test'));
  assert.equal((await postline.account.get()).account.id, server.acme.accountId);
  assert.ok(Array.isArray((await postline.templates.folders()).data));
  const sup = await postline.suppression.add({ email: 'gone@example.net' });
  assert.ok(sup);
  const removed = await postline.suppression.remove('gone@example.net');
  assert.ok(removed);
});
