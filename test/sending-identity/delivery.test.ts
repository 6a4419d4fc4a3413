/**
 * Sending identity in the delivery engine, on loopback: each source is a 127.0.0.x address,
 * the test MXs record the peer address of every connection; MTA-STS policies are served over
 * HTTPS by a test CA's certificate, and the engine trusts that CA the way NODE_EXTRA_CA_CERTS
 * would make production trust it.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { DeliveryEngine, DEFAULT_DELIVERY_OPTIONS } from '../../src/delivery/engine.js';
import { setAccountPool } from '../../src/domain/accounts.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { CampaignRenderer } from '../../src/domain/campaigns/content.js';
import { tlsReportFor } from '../../src/domain/tls-reports.js';
import { createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { basicEmail, RECIPIENT_DOMAIN, SENDER_DOMAIN, startMailEnv } from '../helpers/mail-env.js';
import { startSmtpMx } from '../helpers/smtp-mx.js';
import { createTestCa } from '../helpers/test-ca.js';
import { api, campaignBody, seedList } from '../campaigns/helpers.js';

const TX = '127.0.0.101';
const BULK = '127.0.0.102';
const OWN = '127.0.0.103';
const dir = mkdtempSync(join(tmpdir(), 'postline-identity-delivery-'));
const policyPath = join(dir, 'policy.json');
writeFileSync(policyPath, JSON.stringify({
  sources: {
    tx1: { address: TX, ehlo: 'tx1.postline.test' },
    bulk1: { address: BULK, ehlo: 'bulk1.postline.test' },
    own1: { address: OWN, ehlo: 'own1.postline.test' },
  },
  pools: { transactional: ['tx1'], broadcast: ['bulk1'], dedicated: ['own1'] },
}));

const ca = createTestCa();
after(() => ca.close());

// The MTA-STS policy host of the recipient domains plain.test, tls.test and other.test, on its
// own loopback address: one policy listing MX hosts under mx.test.
let policyText = 'version: STSv1\nmode: enforce\nmx: *.mx.test\nmax_age: 86400\n';
let policyFetches = 0;
const policyServer = createServer(ca.issue(['mta-sts.plain.test', 'mta-sts.tls.test', 'mta-sts.other.test']), (_req, res) => {
  policyFetches++;
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(policyText);
});
await new Promise<void>((r) => policyServer.listen(0, '127.0.0.110', () => r()));
after(() => new Promise<void>((r) => policyServer.close(() => r())));

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({
  clock,
  env: { POSTLINE_DELIVERY_POLICY: policyPath, POSTLINE_MTA_STS_PORT: String((policyServer.address() as AddressInfo).port) },
});
const { app, pool, config, dns, mx, acme } = env;

// The MXs of those domains listen on the default MX's port (delivery has one MX port), on their own addresses.
const plainMx = await startSmtpMx({ address: '127.0.0.111', port: mx.port, starttls: false });
const tlsMx = await startSmtpMx({ address: '127.0.0.112', port: mx.port, tls: ca.issue(['tls.mx.test']) });
const otherNameMx = await startSmtpMx({ address: '127.0.0.113', port: mx.port, tls: ca.issue(['mx.elsewhere.test']) });
after(() => Promise.all([plainMx.close(), tlsMx.close(), otherNameMx.close()]));

const engine = new DeliveryEngine({ pool, config, clock, log: pino({ level: 'silent' }), extraCa: [ca.cert], content: (links) => new CampaignRenderer(pool, links) }, DEFAULT_DELIVERY_OPTIONS);
after(() => engine.close());
async function deliverAll(): Promise<void> {
  while ((await engine.runOnce()) > 0) { /* until nothing is due */ }
}

const peersSince = (start: number) => mx.peers.slice(start);

test('API mail leaves from the transactional source, with its EHLO name; the message records it', async () => {
  const start = mx.peers.length;
  const res = await env.send(basicEmail());
  assert.equal(res.statusCode, 202, res.body);
  await deliverAll();
  assert.deepEqual(new Set(peersSince(start)), new Set([TX]));
  const msg = mx.messages.at(-1)!;
  assert.equal(msg.remoteAddress, TX);
  assert.equal(msg.ehlo, 'tx1.postline.test');
  const got = (await app.inject({ url: `/api/v1/emails/${res.json().id}`, headers: acme.live })).json();
  assert.equal(got.status, 'delivered');
  assert.deepEqual(got.source, { name: 'tx1', address: TX });
});

test('campaign mail leaves from the broadcast source', async () => {
  const live = api(app, acme.live);
  const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 4, domain: RECIPIENT_DOMAIN });
  const created = await live.post('/api/v1/campaigns', campaignBody(listId, { from: { email: `news@${SENDER_DOMAIN}`, name: 'Acme' } }));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal((await live.post(`/api/v1/campaigns/${created.body.id}/send`)).status, 202);
  for (;;) {
    const step = await runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null });
    if (step.messages === 0 && step.started === 0) break;
  }
  const start = mx.messages.length;
  await deliverAll();
  const arrived = mx.messages.slice(start);
  assert.equal(arrived.length, 4);
  assert.deepEqual(new Set(arrived.map((m) => m.remoteAddress)), new Set([BULK]));
  assert.deepEqual(new Set(arrived.map((m) => m.ehlo)), new Set(['bulk1.postline.test']));
});

test('an account assigned its own pool sends only from that pool; other accounts keep theirs', async () => {
  const other = await createTestAccount(pool, 'Dedicated Co');
  await createVerifiedDomain(pool, other.accountId, 'dedicated.test', config.secret);
  await setAccountPool(pool, Object.keys(config.deliveryPolicy.identity.pools), other.accountId, 'dedicated');
  const start = mx.messages.length;
  for (let i = 0; i < 3; i++) {
    const r = await env.send(basicEmail({ to: `d${i}@${RECIPIENT_DOMAIN}`, from: { email: 'hi@dedicated.test' } }), other.live);
    assert.equal(r.statusCode, 202, r.body);
  }
  assert.equal((await env.send(basicEmail({ to: `acme-after@${RECIPIENT_DOMAIN}` }))).statusCode, 202);
  await deliverAll();
  const arrived = mx.messages.slice(start);
  assert.deepEqual(arrived.filter((m) => m.envelope.to[0].startsWith('d')).map((m) => m.remoteAddress), [OWN, OWN, OWN]);
  assert.deepEqual(arrived.filter((m) => m.envelope.to[0].startsWith('acme-after')).map((m) => m.remoteAddress), [TX]);
});

// --- MTA-STS in the transmit step -------------------------------------------------------

function stsDomain(domain: string, mxHost: string, mxAddress: string, id = 'one') {
  dns.setRecords(domain, 'MX', [{ exchange: mxHost, priority: 10 }]);
  dns.setRecords(mxHost, 'A', [mxAddress]);
  dns.setRecords(`_mta-sts.${domain}`, 'TXT', [`v=STSv1; id=${id};`]);
  dns.setRecords(`mta-sts.${domain}`, 'A', ['127.0.0.110']);
}

test('MTA-STS enforce + an MX without STARTTLS: deferred with the reason, never sent in plaintext, recorded for the TLS report', async () => {
  stsDomain('plain.test', 'plain.mx.test', '127.0.0.111');
  const res = await env.send(basicEmail({ to: 'ada@plain.test' }));
  await deliverAll();
  const got = (await app.inject({ url: `/api/v1/emails/${res.json().id}`, headers: acme.live })).json();
  assert.equal(got.status, 'deferred');
  assert.match(got.lastResponse, /^mta-sts: plain\.mx\.test offers no STARTTLS \(plain\.test enforces TLS; /);
  assert.equal(plainMx.messages.length, 0, 'nothing in plaintext');
  assert.equal(policyFetches, 1);
  const report = await tlsReportFor(pool, { organization: 'o', contact: 'c@d.test', host: 'h.test' }, 'plain.test', '2026-11-20');
  assert.equal(report.policies[0].summary['total-failure-session-count'], 1);
  assert.equal(report.policies[0]['failure-details']![0]['result-type'], 'starttls-not-supported');
  assert.equal(report.policies[0]['failure-details']![0]['sending-mta-ip'], TX);
});

test('MTA-STS enforce + STARTTLS with a certificate for the MX name: delivered over TLS; the policy is not fetched again', async () => {
  stsDomain('tls.test', 'tls.mx.test', '127.0.0.112');
  const res = await env.send(basicEmail({ to: 'bob@tls.test' }));
  const again = await env.send(basicEmail({ to: 'bea@tls.test' }));
  await deliverAll();
  const got = (await app.inject({ url: `/api/v1/emails/${res.json().id}`, headers: acme.live })).json();
  assert.equal(got.status, 'delivered', got.lastResponse);
  const msg = tlsMx.messages.at(-1)!;
  assert.equal(msg.tls, true);
  assert.equal(msg.remoteAddress, TX);
  assert.equal((await app.inject({ url: `/api/v1/emails/${again.json().id}`, headers: acme.live })).json().status, 'delivered');
  assert.equal(policyFetches, 2, 'one fetch per domain for its max_age, not one per message');
});

test('MTA-STS enforce + a certificate for another name: deferred; testing mode: delivered and recorded', async () => {
  stsDomain('other.test', 'other.mx.test', '127.0.0.113');
  const enforced = await env.send(basicEmail({ to: 'cy@other.test' }));
  await deliverAll();
  const e = (await app.inject({ url: `/api/v1/emails/${enforced.json().id}`, headers: acme.live })).json();
  assert.equal(e.status, 'deferred');
  assert.match(e.lastResponse, /^mta-sts: other\.mx\.test presents a certificate for another name/);
  assert.equal(otherNameMx.messages.length, 0);

  // A new policy id: fetched again at once, now in testing mode.
  policyText = policyText.replace('mode: enforce', 'mode: testing');
  stsDomain('other.test', 'other.mx.test', '127.0.0.113', 'two');
  clock.advance(6 * 60_000); // past the 5 minutes a worker trusts its last TXT answer
  const tested = await env.send(basicEmail({ to: 'di@other.test' }));
  await deliverAll();
  const t = (await app.inject({ url: `/api/v1/emails/${tested.json().id}`, headers: acme.live })).json();
  assert.equal(t.status, 'delivered', t.lastResponse);
  assert.equal(policyFetches, 4);
  assert.ok(otherNameMx.messages.some((m) => m.envelope.to[0] === 'di@other.test'));
  const report = await tlsReportFor(pool, { organization: 'o', contact: 'c@d.test', host: 'h.test' }, 'other.test', '2026-11-20');
  const testing = report.policies.find((p) => p.policy['policy-string']!.includes('mode: testing'))!;
  assert.deepEqual(testing['failure-details']!.map((f) => [f['result-type'], f['receiving-mx-hostname']]), [['certificate-host-mismatch', 'other.mx.test']]);
});
