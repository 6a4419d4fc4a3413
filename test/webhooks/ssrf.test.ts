import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { recordEvents } from '../../src/domain/events.js';
import { validateHookUrl } from '../../src/domain/webhooks/hooks.js';
import { forbiddenAddressReason, guardedPost, type Resolver } from '../../src/domain/webhooks/ssrf.js';
import { dispatchOnce } from '../../src/workers/webhooks.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock, env: { POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'false' } });
const acme = await createTestAccount(pool, 'Acme');
const receiver = await startWebhookReceiver();
after(() => receiver.close());

const fakeDns = (answers: Record<string, string[]>): Resolver => async (host) => {
  const list = answers[host];
  if (!list) throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

test('address guard: private, loopback, link-local, CGNAT, ULA, metadata, mapped, multicast and reserved are refused', () => {
  const refused = [
    '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '169.254.10.10',
    '100.64.0.1', '100.127.255.254', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.255.255.250', '240.0.0.1', '255.255.255.255',
    '192.0.2.1', '198.18.0.1', '::1', '::', 'fc00::1', 'fd12:3456::1', 'fe80::1', 'ff02::1', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '2002:a00:1::', '2001:db8::1', '::127.0.0.1',
  ];
  for (const ip of refused) assert.ok(forbiddenAddressReason(ip), `${ip} must be refused`);
  const allowed = ['93.184.216.34', '8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '2a00:1450:4001:80b::200e'];
  for (const ip of allowed) assert.equal(forbiddenAddressReason(ip), null, `${ip} is public`);
  assert.match(forbiddenAddressReason('169.254.169.254') ?? '', /metadata/);
  assert.match(forbiddenAddressReason('::ffff:127.0.0.1') ?? '', /loopback, embedded in an IPv6 address/);
});

test('create: private, loopback, metadata and IPv4-mapped targets are 422 on field url', async () => {
  const urls = [
    'http://127.0.0.1/hook', 'http://localhost:8080/hook', 'http://10.0.0.5/hook', 'http://192.168.0.10/hook', 'http://169.254.169.254/latest/meta-data/',
    'http://[::1]/hook', 'http://[::ffff:127.0.0.1]/hook', 'http://[::ffff:a9fe:a9fe]/hook', 'http://0.0.0.0/hook', 'http://100.64.1.1/hook',
    'http://[fd00::1]/hook', 'http://2130706433/hook', 'http://0x7f.1/hook', receiver.url,
  ];
  for (const url of urls) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { url, events: ['open'] } });
    assert.equal(res.statusCode, 422, url);
    const body = res.json();
    assert.equal(body.code, 'validation_failed', url);
    assert.equal(body.errors[0].field, 'url', url);
    assert.match(body.errors[0].message, /not a public address/, url);
  }
});

test('create: a name is refused when any of its addresses is private', async () => {
  const resolve = fakeDns({ 'mixed.example': ['93.184.216.34', '10.0.0.7'], 'public.example': ['93.184.216.34', '2606:4700::1'] });
  await assert.rejects(validateHookUrl('https://mixed.example/hook', { allowPrivate: false, resolve }), (err: Error & { errors?: unknown[] }) => {
    assert.match(err.message, /mixed\.example resolves to 10\.0\.0\.7/);
    return true;
  });
  assert.ok(await validateHookUrl('https://public.example/hook', { allowPrivate: false, resolve }));
  await assert.rejects(validateHookUrl('https://nowhere.example/hook', { allowPrivate: false, resolve }), /does not resolve/);
});

test('delivery: the target is checked again (DNS rebinding), and the batch is not sent', async () => {
  // Created while the name pointed at a public address; now it points at loopback.
  let answers: Record<string, string[]> = { 'rebind.example': ['93.184.216.34'] };
  const resolve: Resolver = async (host) => fakeDns(answers)(host);
  const url = new URL(`http://rebind.example:${new URL(receiver.url).port}/hook`);
  assert.ok(await validateHookUrl(url.href, { allowPrivate: false, resolve }));
  answers = { 'rebind.example': ['127.0.0.1'] };
  const result = await guardedPost(url, Buffer.from('{}'), {}, { allowPrivate: false, timeoutMs: 2000, resolve });
  assert.equal(result.kind, 'forbidden');
  assert.equal(receiver.requests.length, 0);
});

test('delivery: the connection goes to the address that was checked, not to a fresh DNS answer', async () => {
  // `pinned.invalid` does not exist in real DNS: only the checked answer can have been used.
  const resolve = fakeDns({ 'pinned.invalid': ['127.0.0.1'] });
  const url = new URL(`http://pinned.invalid:${new URL(receiver.url).port}/pinned`);
  const result = await guardedPost(url, Buffer.from('{"x":1}'), { 'content-type': 'application/json' }, { allowPrivate: true, timeoutMs: 2000, resolve });
  assert.equal(result.kind, 'response');
  const req = receiver.requests.at(-1)!;
  assert.equal(req.path, '/pinned');
  assert.equal(req.headers.host, url.host, 'Host header keeps the name');
});

test('delivery: a hook whose target became private is refused at delivery time and retried later', async () => {
  // Inserted directly: the API would have refused it.
  const { createHook } = await import('../../src/domain/webhooks/hooks.js');
  const hook = await createHook(pool, { ...config, webhookAllowPrivate: true }, acme.accountId, { url: receiver.url, events: ['open'] }, clock.now());
  await recordEvents(pool, [{ accountId: acme.accountId, messageId: null, type: 'open', email: 'a@example.com', occurredAt: clock.now() }]);
  const before = receiver.requests.length;
  const [report] = await dispatchOnce({ config, pool, clock });
  assert.equal(report.outcome, 'retry');
  assert.equal(receiver.requests.length, before);
  const log = (await app.inject({ url: `/api/v1/hooks/${hook.id}/deliveries`, headers: acme.live })).json();
  assert.equal(log.data[0].outcome, 'retrying');
  assert.equal(log.data[0].statusCode, null);
  assert.match(log.data[0].error, /127\.0\.0\.1 is not a public address: loopback/);
  await pool.query('DELETE FROM hooks WHERE id = $1', [hook.id]);
});

test('delivery: a 302 redirect is not followed; the batch fails without retry', async () => {
  const target = await startWebhookReceiver();
  after(() => target.close());
  const { createHook } = await import('../../src/domain/webhooks/hooks.js');
  const open = { ...config, webhookAllowPrivate: true };
  const hook = await createHook(pool, open, acme.accountId, { url: `${receiver.origin}/redirecting`, events: ['click'] }, clock.now());
  receiver.enqueue({ status: 302, headers: { location: `${target.url}?stolen=1` } });
  await recordEvents(pool, [{ accountId: acme.accountId, messageId: null, type: 'click', email: 'a@example.com', url: 'https://example.com/', occurredAt: clock.now() }]);
  const [report] = await dispatchOnce({ config: open, pool, clock });
  assert.equal(report.outcome, 'dropped');
  assert.equal(target.requests.length, 0, 'the redirect target never heard of it');
  const log = (await app.inject({ url: `/api/v1/hooks/${hook.id}/deliveries`, headers: acme.live })).json();
  assert.equal(log.data[0].statusCode, 302);
  assert.equal(log.data[0].outcome, 'failed');
  assert.match(log.data[0].error, /redirect to .* not followed/);
  assert.deepEqual(await dispatchOnce({ config: open, pool, clock }), [], 'not retried');
});
