import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MxHost } from '../../src/mail/dns.js';
import { SmtpSender, type SmtpEnvelope } from '../../src/mail/smtp.js';
import { deliverWithSts } from '../../src/mail/mta-sts/deliver.js';
import type { StsLookup } from '../../src/mail/mta-sts/resolver.js';
import type { StsMode } from '../../src/mail/mta-sts/policy.js';
import { startSmtpMx, type TestSmtpMx } from '../helpers/smtp-mx.js';
import { createTestCa, type TestCa } from '../helpers/test-ca.js';

const raw = Buffer.from('From: news@example.com\r\nTo: alice@sts.test\r\nSubject: Hi\r\nMessage-ID: <sts_1@example.com>\r\n\r\nHello.\r\n');
const envelope: SmtpEnvelope = { from: 'bounces@example.com', to: 'alice@sts.test' };
const POLICY_TEXT = (mode: StsMode) => `version: STSv1\nmode: ${mode}\nmx: *.sts.test\nmax_age: 86400\n`;

let ca: TestCa;
let good: TestSmtpMx; // mx1.sts.test: STARTTLS with a certificate for its name
let plain: TestSmtpMx; // mx2.sts.test: no STARTTLS
let wrongName: TestSmtpMx; // mx3.sts.test: a certificate for another name
let expired: TestSmtpMx; // mx4.sts.test: an expired certificate
let untrusted: TestSmtpMx; // mx5.sts.test: a certificate from a CA nobody trusts
let strangerCa: TestCa;
let rogue: TestSmtpMx; // mx.elsewhere.test: not in the policy
let sender: SmtpSender;

before(async () => {
  ca = createTestCa();
  good = await startSmtpMx({ address: '127.0.0.51', tls: ca.issue(['mx1.sts.test']) });
  plain = await startSmtpMx({ address: '127.0.0.52', starttls: false });
  wrongName = await startSmtpMx({ address: '127.0.0.53', tls: ca.issue(['mx.other.test']) });
  expired = await startSmtpMx({ address: '127.0.0.54', tls: ca.issue(['mx4.sts.test'], { notBefore: new Date(Date.now() - 10 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) }) });
  strangerCa = createTestCa('Stranger CA');
  untrusted = await startSmtpMx({ address: '127.0.0.55', tls: strangerCa.issue(['mx5.sts.test']) });
  rogue = await startSmtpMx({ address: '127.0.0.56', tls: ca.issue(['mx.elsewhere.test']) });
  sender = new SmtpSender({ heloName: 'out.postline.test', connectionTimeoutMs: 3000, greetingTimeoutMs: 3000, extraCa: [ca.cert] });
});
after(async () => {
  await sender.close();
  for (const mx of [good, plain, wrongName, expired, untrusted, rogue]) await mx.close();
  ca.close();
  strangerCa.close();
});

const host = (exchange: string, mx: TestSmtpMx, priority = 10): MxHost => ({ exchange, priority, addresses: [mx.host] });
const lookup = (mode: StsMode): StsLookup => ({
  kind: 'policy',
  domain: 'sts.test',
  cached: { domain: 'sts.test', id: '1', policy: { mode, maxAgeSeconds: 86400, mx: ['*.sts.test'] }, text: POLICY_TEXT(mode), fetchedAt: new Date(), expiresAt: new Date(Date.now() + 86_400_000) },
});

/** Each test talks to MXs on their own port, so pooled connections never cross tests. */
async function deliver(hosts: MxHost[], l: StsLookup | null, source?: { address: string; ehlo: string }) {
  const byHost = new Map([good, plain, wrongName, expired, untrusted, rogue].map((m) => [m.host, m]));
  return deliverWithSts({
    domain: 'sts.test',
    hosts,
    port: 0,
    source,
    lookup: l,
    send: (target) => sender.send({ ...target, port: byHost.get(target.address!)!.port }, envelope, raw),
  });
}

const received = (mx: TestSmtpMx) => mx.messages.length;

describe('enforce', () => {
  test('an MX without STARTTLS: deferred with the reason, never sent in plaintext', async () => {
    const before = received(plain);
    const { result, sessions } = await deliver([host('mx2.sts.test', plain)], lookup('enforce'));
    assert.equal(result.kind, 'deferred');
    assert.match(result.response, /^mta-sts: mx2\.sts\.test offers no STARTTLS \(sts\.test enforces TLS; /);
    assert.equal(received(plain), before, 'nothing reached the MX in plaintext');
    assert.deepEqual(sessions.map((s) => [s.result, s.receivingMx, s.receivingIp]), [['starttls-not-supported', 'mx2.sts.test', '127.0.0.52']]);
  });

  test('STARTTLS with a certificate valid for the MX name: delivered over TLS, a successful session', async () => {
    const { result, sessions } = await deliver([host('mx1.sts.test', good)], lookup('enforce'));
    assert.equal(result.kind, 'delivered', result.response);
    const msg = good.messages.at(-1)!;
    assert.equal(msg.tls, true);
    assert.deepEqual(sessions, [{ policy: { type: 'sts', text: POLICY_TEXT('enforce') }, result: 'success' }]);
  });

  test('a certificate for another name: deferred, certificate-host-mismatch', async () => {
    const { result, sessions } = await deliver([host('mx3.sts.test', wrongName)], lookup('enforce'));
    assert.equal(result.kind, 'deferred');
    assert.match(result.response, /^mta-sts: mx3\.sts\.test presents a certificate for another name/);
    assert.equal(received(wrongName), 0);
    assert.equal(sessions[0].result, 'certificate-host-mismatch');
  });

  test('an expired certificate or one no trusted CA signed: deferred, with the failure named', async () => {
    const old = await deliver([host('mx4.sts.test', expired)], lookup('enforce'));
    assert.match(old.result.response, /presents an expired certificate/);
    assert.equal(old.sessions[0].result, 'certificate-expired');
    const selfSigned = await deliver([host('mx5.sts.test', untrusted)], lookup('enforce'));
    assert.match(selfSigned.result.response, /presents a certificate no trusted CA signed/);
    assert.equal(selfSigned.sessions[0].result, 'certificate-not-trusted');
    assert.equal(received(expired) + received(untrusted), 0);
  });

  test('a failing host is skipped for the next listed one', async () => {
    const before = received(good);
    const { result, sessions } = await deliver([host('mx2.sts.test', plain, 10), host('mx1.sts.test', good, 20)], lookup('enforce'));
    assert.equal(result.kind, 'delivered');
    assert.equal(received(good), before + 1);
    assert.deepEqual(sessions.map((s) => s.result), ['starttls-not-supported', 'success']);
  });

  test('MX hosts the policy does not list are never contacted; none listed: deferred', async () => {
    const peers = rogue.peers.length;
    const { result, sessions } = await deliver([host('mx.elsewhere.test', rogue)], lookup('enforce'));
    assert.equal(result.kind, 'deferred');
    assert.match(result.response, /^mta-sts: no MX host of sts\.test \(mx\.elsewhere\.test\) matches its enforced policy/);
    assert.equal(rogue.peers.length, peers);
    assert.deepEqual(sessions.map((s) => [s.result, s.receivingMx]), [['validation-failure', 'mx.elsewhere.test']]);
  });
});

describe('testing', () => {
  test('an MX without STARTTLS: delivered as today, the failure recorded', async () => {
    const before = received(plain);
    const { result, sessions } = await deliver([host('mx2.sts.test', plain)], lookup('testing'));
    assert.equal(result.kind, 'delivered', result.response);
    assert.equal(received(plain), before + 1);
    assert.equal(plain.messages.at(-1)!.tls, false);
    assert.deepEqual(sessions.map((s) => s.result), ['starttls-not-supported']);
  });

  test('a certificate for another name: delivered over opportunistic TLS, the mismatch recorded', async () => {
    const { result, sessions } = await deliver([host('mx3.sts.test', wrongName)], lookup('testing'));
    assert.equal(result.kind, 'delivered');
    assert.equal(wrongName.messages.at(-1)!.tls, true);
    assert.deepEqual(sessions.map((s) => s.result), ['certificate-host-mismatch']);
  });

  test('an unlisted MX: delivered, recorded as a validation failure', async () => {
    const { result, sessions } = await deliver([host('mx.elsewhere.test', rogue)], lookup('testing'));
    assert.equal(result.kind, 'delivered');
    assert.deepEqual(sessions.map((s) => s.result), ['validation-failure']);
  });
});

describe('no policy', () => {
  test('opportunistic as always, nothing recorded; an unavailable policy records its fetch failure', async () => {
    const none = await deliver([host('mx2.sts.test', plain)], { kind: 'none', domain: 'sts.test', reason: 'no record' });
    assert.equal(none.result.kind, 'delivered');
    assert.deepEqual(none.sessions, []);
    const unavailable = await deliver([host('mx2.sts.test', plain)], { kind: 'unavailable', domain: 'sts.test', failure: 'sts-policy-fetch-error', error: 'HTTP 500' });
    assert.equal(unavailable.result.kind, 'delivered');
    assert.deepEqual(unavailable.sessions, [{ policy: { type: 'sts', text: '' }, result: 'sts-policy-fetch-error', sendingIp: undefined }]);
  });
});

describe('source address', () => {
  test('the connection leaves from the source address and greets with its EHLO name, under a policy too', async () => {
    const source = { address: '127.0.0.61', ehlo: 'out1.postline.test' };
    const { result } = await deliver([host('mx1.sts.test', good)], lookup('enforce'), source);
    assert.equal(result.kind, 'delivered');
    const msg = good.messages.at(-1)!;
    assert.equal(msg.remoteAddress, '127.0.0.61');
    assert.equal(msg.ehlo, 'out1.postline.test');
    assert.equal(good.peers.at(-1), '127.0.0.61');

    const other = await deliver([host('mx2.sts.test', plain)], null, { address: '127.0.0.62', ehlo: 'out2.postline.test' });
    assert.equal(other.result.kind, 'delivered');
    assert.equal(plain.messages.at(-1)!.remoteAddress, '127.0.0.62');
  });

  test('an IPv4 source does not try IPv6 MX addresses', async () => {
    const { result } = await deliver([{ exchange: 'mx1.sts.test', priority: 10, addresses: ['::1'] }], null, { address: '127.0.0.61', ehlo: 'out1.postline.test' });
    assert.equal(result.kind, 'deferred');
    assert.match(result.response, /no MX host of sts\.test to try from an IPv4 source/);
  });
});
