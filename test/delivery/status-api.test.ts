import { test } from 'node:test';
import assert from 'node:assert/strict';
import { recordRoutes, throttleDestination } from '../../src/db/queries/shaping.js';
import { maskAddresses } from '../../src/http/routes/v1/delivery-status.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

const clock = new ManualClock(new Date('2026-11-27T04:00:00.000Z'));
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');

test('delivery status: empty before any delivery, and only for an authenticated caller', async () => {
  const res = await app.inject({ url: '/api/v1/delivery/status', headers: acme.live });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { generatedAt: '2026-11-27T04:00:00.000Z', data: [] });
  const anonymous = await app.inject({ url: '/api/v1/delivery/status' });
  assert.equal(anonymous.statusCode, 401);
  assert.equal(anonymous.json().code, 'unauthorized');
  const wrong = await app.inject({ url: '/api/v1/delivery/status', headers: { authorization: 'Bearer sk_live_nope' } });
  assert.equal(wrong.statusCode, 401);
});

test('delivery status: a suspended provider with its limits and throttle reply; the same aggregate for every account and key, with no recipient in it', async () => {
  const now = clock.now();
  await recordRoutes(pool, [{ domain: 'acme-customer.example', destination: 'gmail' }], now);
  await throttleDestination(pool, {
    destination: 'gmail', source: '', provider: 'gmail', now, until: new Date(now.getTime() + 300_000),
    reply: '421-4.7.28 <jane.doe@acme-customer.example> unusual rate of unsolicited mail', decrease: 0.5,
  });
  const res = await app.inject({ url: '/api/v1/delivery/status', headers: acme.live });
  assert.equal(res.statusCode, 200, res.body);
  const gmail = config.deliveryPolicy.providers.find((p) => p.name === 'gmail');
  assert.ok(gmail);
  assert.deepEqual(res.json().data, [{
    name: 'gmail', provider: 'gmail', source: '', connections: 0, inFlight: 0, sentLastMinute: 0,
    limits: { maxConnections: gmail.maxConnections, messagesPerMinute: gmail.messagesPerMinute, messagesPerConnection: gmail.messagesPerConnection },
    suspendedUntil: '2026-11-27T04:05:00.000Z',
    lastThrottleReply: '421-4.7.28 <…@acme-customer.example> unusual rate of unsolicited mail',
    lastThrottleAt: '2026-11-27T04:00:00.000Z',
    rateFactor: 0.5,
  }]);
  assert.ok(!res.body.includes('jane.doe'), 'a recipient quoted by the receiver is masked');
  assert.ok(!/accountId|acc_|"to"|recipient"/.test(res.body), 'no account, message or recipient field');

  // Deployment-wide infrastructure: another account sees the same figures; a test key reads like a live key.
  const theirs = await app.inject({ url: '/api/v1/delivery/status', headers: other.live });
  assert.deepEqual(theirs.json(), res.json());
  const sandboxed = await app.inject({ url: '/api/v1/delivery/status', headers: acme.test });
  assert.equal(sandboxed.statusCode, 200);
  assert.deepEqual(sandboxed.json(), res.json(), 'a read answers as with a live key (docs/api-keys.md)');

  clock.advance(300_001);
  const later = await app.inject({ url: '/api/v1/delivery/status', headers: acme.live });
  assert.equal(later.json().data[0].suspendedUntil, null, 'the suspension is over');
  assert.match(later.json().data[0].lastThrottleReply, /unusual rate/, 'the last reply stays for the hour');
});

test('delivery status: the route is in the OpenAPI document', async () => {
  const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();
  assert.equal(doc.paths['/api/v1/delivery/status'].get.operationId, 'getDeliveryStatus');
});

test('maskAddresses: masks the local part of every address, leaves other text alone', () => {
  assert.equal(maskAddresses('550 5.1.1 <a.b+c@x.example>: rate limited; b@y.example.org'), '550 5.1.1 <…@x.example>: rate limited; …@y.example.org');
  assert.equal(maskAddresses('421 4.7.0 [203.0.113.5] try again later'), '421 4.7.0 [203.0.113.5] try again later');
  assert.equal(maskAddresses(''), '');
});
