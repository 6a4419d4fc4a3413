import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { dkimVerify } from 'mailauth';
import { composeMessage } from '../../src/mail/compose.js';
import {
  dkimRecordName,
  dkimTxtRecord,
  generateDkimKeyPair,
  signMessage,
  DkimSignError,
  type DkimKeyPair,
  type DkimSigningKey,
} from '../../src/mail/dkim.js';
import { createResolver, toMailauthResolver } from '../../src/mail/dns.js';
import { SmtpSender } from '../../src/mail/smtp.js';
import { startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startSmtpMx, type TestSmtpMx } from '../helpers/smtp-mx.js';

const DOMAIN = 'dkim.example.test';
let dnsServer: TestDnsServer;
let server: TestSmtpMx;
let sender: SmtpSender;
let rsa: DkimKeyPair;
let ed: DkimKeyPair;
let keys: DkimSigningKey[];

before(async () => {
  [dnsServer, server, rsa, ed] = await Promise.all([startDnsServer(), startSmtpMx(), generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
  sender = new SmtpSender({ heloName: 'out.postline.test' });
  dnsServer.setRecords(dkimRecordName('pl1r', DOMAIN), 'TXT', [dkimTxtRecord('rsa', rsa.publicKeyPem)]);
  dnsServer.setRecords(dkimRecordName('pl1e', DOMAIN), 'TXT', [dkimTxtRecord('ed25519', ed.publicKeyPem)]);
  keys = [
    { algorithm: 'rsa', selector: 'pl1r', privateKeyPem: rsa.privateKeyPem },
    { algorithm: 'ed25519', selector: 'pl1e', privateKeyPem: ed.privateKeyPem },
  ];
});
after(async () => {
  await sender.close();
  await Promise.all([server.close(), dnsServer.close()]);
});

/** mailauth, resolving keys through the test DNS server: an independent verifier. */
function verify(raw: Buffer) {
  return dkimVerify(raw, { resolver: toMailauthResolver(createResolver([dnsServer.address])) });
}

async function composed(): Promise<Buffer> {
  return composeMessage({
    from: { email: `news@${DOMAIN}`, name: 'News' },
    to: ['alice@example.org'],
    subject: 'Signed twice',
    html: '<p>Hello <a href="https://example.com">there</a></p>',
    messageId: `msg_0193a1b2c3d4e5f60718293a4b5c6d7e@${DOMAIN}`,
    date: new Date('2026-11-20T10:15:30.000Z'),
    listUnsubscribe: { url: 'https://t.example.test/u/1', mailto: `unsub@${DOMAIN}` },
  });
}

async function deliver(raw: Buffer): Promise<Buffer> {
  const before = server.messages.length;
  const result = await sender.send({ kind: 'mx', host: 'mx.example.org', address: '127.0.0.1', port: server.port }, { from: `bounces@${DOMAIN}`, to: 'alice@example.org' }, raw);
  assert.equal(result.kind, 'delivered', JSON.stringify(result));
  return (await server.waitForMessages(before + 1))[before].raw;
}

test('dkim: the TXT records follow RFC 6376 (RSA SPKI) and RFC 8463 (raw 32-byte Ed25519 key)', () => {
  assert.match(dkimTxtRecord('rsa', rsa.publicKeyPem), /^v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/=]+$/);
  const edRecord = dkimTxtRecord('ed25519', ed.publicKeyPem);
  assert.match(edRecord, /^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/=]+$/);
  assert.equal(Buffer.from(edRecord.split('p=')[1], 'base64').length, 32);
  assert.ok(dkimTxtRecord('rsa', rsa.publicKeyPem).length > 255, 'the RSA record needs splitting in DNS');
});

test('dkim: RSA and Ed25519 signatures both verify on the bytes the MX received', async () => {
  const signed = await signMessage(await composed(), { domain: DOMAIN, keys, signTime: new Date() });
  const received = await deliver(signed);
  const result = await verify(received);
  assert.equal(result.results.length, 2);
  // mailauth's typings name these algorithm/canonicalization; at runtime they are algo/format.
  const rows = result.results as unknown as { algo: string; format: string; signingDomain: string; info: string; status: { result: string; aligned?: string } }[];
  const byAlgo = Object.fromEntries(rows.map((r) => [r.algo, r]));
  for (const algo of ['rsa-sha256', 'ed25519-sha256']) {
    const r = byAlgo[algo];
    assert.ok(r, `${algo} signature present`);
    assert.equal(r.status.result, 'pass', `${algo}: ${r.info}`);
    assert.equal(r.signingDomain, DOMAIN);
    assert.equal(r.format, 'relaxed/relaxed');
    assert.equal(r.status.aligned, DOMAIN);
  }
});

test('dkim: a clock that moves on during signing still gives signatures that verify (one t= for both passes)', async (t) => {
  // Each reading of the clock is 0.6 s later than the one before: without a fixed signing time
  // the t= tag signed and the t= tag written differ.
  let fake = Date.parse('2026-11-20T10:00:00.400Z');
  t.mock.method(Date, 'now', () => (fake += 600));
  const signed = await signMessage(await composed(), { domain: DOMAIN, keys });
  t.mock.restoreAll();
  const result = await verify(await deliver(signed));
  assert.equal(result.results.length, 2);
  for (const r of result.results) assert.equal(r.status.result, 'pass', r.info);
});

test('dkim: the signatures cover the listed headers that are present, and only those', async () => {
  const signed = await signMessage(await composed(), { domain: DOMAIN, keys });
  const headers = signed.toString('utf8').split('\r\n\r\n')[0].replace(/\r\n[ \t]+/g, ' ');
  const sigs = headers.split('\r\n').filter((l) => l.startsWith('DKIM-Signature:'));
  assert.equal(sigs.length, 2);
  for (const sig of sigs) {
    const h = /\bh=([^;]+)/.exec(sig)![1].replace(/\s+/g, '').toLowerCase().split(':');
    for (const name of ['from', 'to', 'subject', 'date', 'message-id', 'mime-version', 'content-type', 'list-unsubscribe', 'list-unsubscribe-post']) {
      assert.ok(h.includes(name), `${name} signed`);
    }
    assert.ok(!h.includes('cc') && !h.includes('reply-to'), 'absent headers are not listed');
    assert.match(sig, /\bc=relaxed\/relaxed\b/);
  }
});

test('dkim: a subject changed in transit fails both signatures', async () => {
  const signed = await signMessage(await composed(), { domain: DOMAIN, keys });
  const received = await deliver(signed);
  const tampered = Buffer.from(received.toString('utf8').replace('Subject: Signed twice', 'Subject: Signed thrice'));
  const result = await verify(tampered);
  assert.equal(result.results.length, 2);
  for (const r of result.results) assert.notEqual(r.status.result, 'pass', r.info);
});

test('dkim: a key that cannot sign fails the call instead of sending unsigned mail', async () => {
  await assert.rejects(
    signMessage(await composed(), { domain: DOMAIN, keys: [{ algorithm: 'rsa', selector: 'x', privateKeyPem: 'not a key' }] }),
    DkimSignError,
  );
  await assert.rejects(signMessage(await composed(), { domain: DOMAIN, keys: [] }), DkimSignError);
});
