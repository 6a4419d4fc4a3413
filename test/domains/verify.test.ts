import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { dkimVerify } from 'mailauth';
import { findSendingDomain, forceVerifyDomain, loadSigningKeys } from '../../src/domain/domains/domains.js';
import { dkimTxtRecord, generateDkimKeyPair, signMessage } from '../../src/mail/dkim.js';
import { createResolver, toMailauthResolver } from '../../src/mail/dns.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { startDnsServer } from '../helpers/dns-server.js';
import { createVerifiedDomain } from '../helpers/domains.js';

const dns = await startDnsServer();
after(() => dns.close());
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({
  clock,
  env: { POSTLINE_DNS_SERVERS: dns.address, POSTLINE_BASE_URL: 'https://mail.postline.test', POSTLINE_TRACKING_HOST: 'track.postline.test' },
});
const acme = await createTestAccount(pool, 'Acme');

interface ApiRecord { type: 'TXT' | 'MX' | 'CNAME'; name: string; value: string; priority?: number; purpose: string; status: string; checkedAt: string | null; detail: string | null }
interface ApiDomain { id: string; name: string; status: string; records: ApiRecord[]; tracking: { host: string; status: string; checkedAt: string | null }; verifiedAt: string | null; checkedAt: string | null }

async function addDomain(name: string): Promise<ApiDomain> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/domains', headers: acme.live, payload: { name } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}

async function verify(d: ApiDomain, path = 'verify'): Promise<ApiDomain> {
  const res = await app.inject({ method: 'POST', url: `/api/v1/domains/${d.id}/${path}`, headers: acme.live });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}

const record = (d: ApiDomain, purpose: string) => d.records.find((r) => r.purpose === purpose)!;
const statuses = (d: ApiDomain) => Object.fromEntries(d.records.map((r) => [r.purpose, r.status]));

/** Publishes records of the domain in the loopback zone, as a customer would at their DNS host. */
function publish(d: ApiDomain, purposes = ['dkim', 'dkim_ed25519', 'return_path', 'spf', 'dmarc', 'tracking']): void {
  for (const r of d.records.filter((x) => purposes.includes(x.purpose))) {
    if (r.type === 'MX') dns.setRecords(r.name, 'MX', [{ exchange: r.value, priority: r.priority! }]);
    else if (r.type === 'CNAME') dns.setRecords(r.name, 'CNAME', [r.value]);
    else dns.setRecords(r.name, 'TXT', [r.value]);
  }
}

test('verify: every record published → each verified, the domain verified, tracking verified', async () => {
  const d = await addDomain('all.example.test');
  publish(d);
  clock.set('2026-11-20T10:05:00.000Z');
  const v = await verify(d);
  assert.deepEqual(statuses(v), { dkim: 'verified', dkim_ed25519: 'verified', return_path: 'verified', spf: 'verified', dmarc: 'verified', tracking: 'verified' });
  assert.equal(v.status, 'verified');
  assert.equal(v.verifiedAt, '2026-11-20T10:05:00.000Z');
  assert.equal(v.checkedAt, '2026-11-20T10:05:00.000Z');
  for (const r of v.records) assert.equal(r.checkedAt, '2026-11-20T10:05:00.000Z');
  assert.deepEqual(v.tracking, { host: 'track.all.example.test', target: 'track.postline.test', status: 'verified', checkedAt: '2026-11-20T10:05:00.000Z' });
  const got = (await app.inject({ url: `/api/v1/domains/${d.id}`, headers: acme.live })).json();
  assert.deepEqual(got, v, 'the result is stored');
});

test('verify: the RSA DKIM record alone verifies the domain; the others report missing', async () => {
  const d = await addDomain('dkim-only.example.test');
  publish(d, ['dkim']);
  const v = await verify(d);
  assert.equal(v.status, 'verified');
  assert.deepEqual(statuses(v), { dkim: 'verified', dkim_ed25519: 'missing', return_path: 'missing', spf: 'missing', dmarc: 'missing', tracking: 'missing' });
  assert.equal(v.tracking.status, 'failed');
});

test('verify: a different key at the DKIM name → mismatch, not verified', async () => {
  const d = await addDomain('wrong-key.example.test');
  publish(d);
  const stranger = await generateDkimKeyPair('rsa');
  dns.setRecords(record(d, 'dkim').name, 'TXT', [dkimTxtRecord('rsa', stranger.publicKeyPem)]);
  const v = await verify(d);
  assert.equal(record(v, 'dkim').status, 'mismatch');
  assert.match(record(v, 'dkim').detail!, /not this domain's key/);
  assert.equal(v.status, 'pending');
  assert.equal(v.verifiedAt, null);
});

test('verify: nothing published → every record missing, still pending', async () => {
  const d = await addDomain('nothing.example.test');
  const v = await verify(d);
  assert.deepEqual(new Set(Object.values(statuses(v))), new Set(['missing']));
  assert.equal(v.status, 'pending');
  assert.ok(v.checkedAt);
});

test('verify: SERVFAIL on the DKIM name → temp_error and not verified; other records still checked', async () => {
  const d = await addDomain('servfail.example.test');
  publish(d);
  dns.fail(record(d, 'dkim').name, 'SERVFAIL');
  const v = await verify(d);
  assert.equal(record(v, 'dkim').status, 'temp_error');
  assert.match(record(v, 'dkim').detail!, /failed temporarily/);
  assert.equal(v.status, 'pending');
  assert.equal(record(v, 'dkim_ed25519').status, 'verified');
  assert.equal(record(v, 'spf').status, 'verified');
});

test('verify: a wrong return-path MX and an SPF record without our host → mismatch', async () => {
  const d = await addDomain('wrong-mx.example.test');
  publish(d);
  dns.setRecords(`bounces.${d.name}`, 'MX', [{ exchange: 'mx.elsewhere.test', priority: 10 }]);
  dns.setRecords(`bounces.${d.name}`, 'TXT', ['v=spf1 include:_spf.elsewhere.test ~all']);
  const v = await verify(d);
  assert.equal(record(v, 'return_path').status, 'mismatch');
  assert.match(record(v, 'return_path').detail!, /mx\.elsewhere\.test/);
  assert.equal(record(v, 'spf').status, 'mismatch');
  assert.equal(v.status, 'verified', 'only DKIM decides');
});

test('verify: once verified, a failing later check updates the records but keeps the domain verified', async () => {
  const d = await addDomain('sticky.example.test');
  publish(d);
  clock.set('2026-11-20T11:00:00.000Z');
  assert.equal((await verify(d)).status, 'verified');
  for (const r of d.records) dns.deleteRecords(r.name);
  clock.set('2026-11-21T09:00:00.000Z');
  const later = await verify(d);
  assert.equal(later.status, 'verified');
  assert.equal(later.verifiedAt, '2026-11-20T11:00:00.000Z', 'first verification time kept');
  assert.equal(later.checkedAt, '2026-11-21T09:00:00.000Z');
  assert.equal(record(later, 'dkim').status, 'missing');
  assert.ok(await findSendingDomain(pool, acme.accountId, `news@${d.name}`), 'still usable for sending');
});

test('tracking: CNAME on → verified and used; removed → failed and no longer used; elsewhere → failed', async () => {
  const d = await addDomain('white.example.test');
  publish(d, ['dkim']);
  await verify(d);
  assert.equal((await findSendingDomain(pool, acme.accountId, `news@${d.name}`))!.trackingHost, null);

  dns.setRecords(`track.${d.name}`, 'CNAME', ['TRACK.postline.test.']);
  clock.set('2026-11-22T08:00:00.000Z');
  const on = await verify(d, 'tracking/verify');
  assert.deepEqual(on.tracking, { host: `track.${d.name}`, target: 'track.postline.test', status: 'verified', checkedAt: '2026-11-22T08:00:00.000Z' });
  assert.equal(record(on, 'tracking').status, 'verified');
  assert.equal((await findSendingDomain(pool, acme.accountId, `news@${d.name}`))!.trackingHost, `track.${d.name}`);
  assert.equal((await loadSigningKeys(pool, d.id, config.secret)).trackingHost, `track.${d.name}`);

  dns.deleteRecords(`track.${d.name}`);
  clock.set('2026-11-23T08:00:00.000Z');
  const off = await verify(d, 'tracking/verify');
  assert.equal(off.tracking.status, 'failed');
  assert.equal(off.tracking.checkedAt, '2026-11-23T08:00:00.000Z');
  assert.equal(record(off, 'tracking').status, 'missing');
  assert.equal((await findSendingDomain(pool, acme.accountId, `news@${d.name}`))!.trackingHost, null);
  assert.equal((await loadSigningKeys(pool, d.id, config.secret)).trackingHost, null);

  dns.setRecords(`track.${d.name}`, 'CNAME', ['cdn.elsewhere.test']);
  const elsewhere = await verify(d, 'tracking/verify');
  assert.equal(elsewhere.tracking.status, 'failed');
  assert.equal(record(elsewhere, 'tracking').status, 'mismatch');
  assert.equal(elsewhere.status, 'verified', 'the tracking check never touches sending verification');
});

test('tracking: a temporary DNS failure leaves the tracking status as it was', async () => {
  const d = await addDomain('white-temp.example.test');
  dns.setRecords(`track.${d.name}`, 'CNAME', ['track.postline.test']);
  assert.equal((await verify(d, 'tracking/verify')).tracking.status, 'verified');
  dns.fail(`track.${d.name}`, 'SERVFAIL');
  const v = await verify(d, 'tracking/verify');
  assert.equal(record(v, 'tracking').status, 'temp_error');
  assert.equal(v.tracking.status, 'verified');
});

test('findSendingDomain: only a verified domain of the account, exact name, any case', async () => {
  const d = await addDomain('from.example.test');
  assert.equal(await findSendingDomain(pool, acme.accountId, `news@${d.name}`), null, 'pending');
  publish(d, ['dkim']);
  await verify(d);
  assert.deepEqual(await findSendingDomain(pool, acme.accountId, 'News@FROM.Example.TEST'), {
    id: d.id, accountId: acme.accountId, name: d.name, bounceDomain: `bounces.${d.name}`, trackingHost: null,
  });
  assert.equal(await findSendingDomain(pool, acme.accountId, `news@sub.${d.name}`), null, 'subdomains need their own records');
  assert.equal(await findSendingDomain(pool, acme.accountId, 'news@example.test'), null, 'nor does the parent');
  assert.equal(await findSendingDomain(pool, acme.accountId, 'not-an-address'), null);
  const other = await createTestAccount(pool, 'Other');
  assert.equal(await findSendingDomain(pool, other.accountId, `news@${d.name}`), null, 'another account');
});

test('findSendingDomain: an IDN From domain matches its punycode form', async () => {
  const d = await addDomain('bücher.example.test');
  await forceVerifyDomain(pool, d.id, clock.now());
  assert.equal((await findSendingDomain(pool, acme.accountId, 'info@Bücher.example.test'))?.id, d.id);
});

test('loadSigningKeys: the decrypted keys sign mail that verifies against the published records', async () => {
  const d = await addDomain('signed.example.test');
  publish(d, ['dkim', 'dkim_ed25519']);
  const keys = await loadSigningKeys(pool, d.id, config.secret);
  assert.equal(keys.domain, d.name);
  assert.deepEqual(keys.keys.map((k) => [k.algorithm, k.selector]), [
    ['rsa', record(d, 'dkim').name.split('.')[0]],
    ['ed25519', record(d, 'dkim_ed25519').name.split('.')[0]],
  ]);
  const raw = Buffer.from([
    `From: News <news@${d.name}>`, 'To: alice@example.org', 'Subject: Signed', 'Date: Fri, 20 Nov 2026 10:00:00 +0000',
    `Message-ID: <msg_1@${d.name}>`, 'MIME-Version: 1.0', 'Content-Type: text/plain; charset=utf-8', '', 'Hello', '',
  ].join('\r\n'));
  const signed = await signMessage(raw, { domain: keys.domain, keys: keys.keys });
  const result = await dkimVerify(signed, { resolver: toMailauthResolver(createResolver([dns.address])) });
  assert.equal(result.results.length, 2);
  for (const r of result.results) assert.equal(r.status.result, 'pass', r.info);
});

test('loadSigningKeys: a wrong root secret fails loudly; an unknown domain is not_found', async () => {
  const d = await addDomain('rotated.example.test');
  await assert.rejects(loadSigningKeys(pool, d.id, 'another-secret-0123456789'), /does not decrypt/);
  await assert.rejects(loadSigningKeys(pool, 'dom_00000000000000000000000000000000', config.secret), { code: 'not_found' });
});

test('forceVerifyDomain and the test helper: verified without DNS, records ready to publish', async () => {
  const h = await createVerifiedDomain(pool, acme.accountId, 'helper.example.test', config.secret);
  assert.match(h.rsaSelector, /^plr-/);
  assert.match(h.edSelector, /^ple-/);
  assert.match(h.rsaTxt, /^v=DKIM1; k=rsa; p=/);
  assert.match(h.edTxt, /^v=DKIM1; k=ed25519; p=/);
  assert.equal(h.rsaRecordName, `${h.rsaSelector}._domainkey.helper.example.test`);
  assert.equal((await findSendingDomain(pool, acme.accountId, 'a@helper.example.test'))?.id, h.id);
  await assert.rejects(forceVerifyDomain(pool, 'dom_00000000000000000000000000000000', clock.now()), { code: 'not_found' });
});
