import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { bounceDomainFor, MAX_DOMAIN_NAME, newSelectors, normalizeDomainName } from '../../src/domain/domains/name.js';
import { compareDkim, compareDmarc, compareHost, compareSpf, expectedRecords, spfRecordValue } from '../../src/domain/domains/records.js';
import { dkimRecordName } from '../../src/mail/dkim.js';

/** A name of exactly n characters (n ≥ 200) made of labels no longer than 63. */
const nameOfLength = (n: number) => `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(n - 196)}.com`;

function refused(input: string, message: RegExp): void {
  assert.throws(() => normalizeDomainName(input), (err: unknown) => {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'validation_failed');
    assert.equal(err.errors?.[0].field, 'name');
    assert.match(err.message, message);
    return true;
  }, input);
}

test('domain name: lower-cased, trimmed, IDNs in punycode', () => {
  assert.equal(normalizeDomainName('  Mail.Example.COM '), 'mail.example.com');
  assert.equal(normalizeDomainName('Exämple.de'), 'xn--exmple-cua.de');
  assert.equal(normalizeDomainName('xn--exmple-cua.de'), 'xn--exmple-cua.de');
});

test('domain name: a 63-character label is accepted, 64 is refused', () => {
  assert.equal(normalizeDomainName(`${'a'.repeat(63)}.com`), `${'a'.repeat(63)}.com`);
  refused(`${'a'.repeat(64)}.com`, /longer than 63/);
});

test('domain name: total length stops where the DKIM record name would pass 253 characters', () => {
  const longest = nameOfLength(MAX_DOMAIN_NAME);
  assert.equal(normalizeDomainName(longest), longest);
  const { rsa } = newSelectors();
  assert.equal(dkimRecordName(rsa, longest).length, 253, 'the longest accepted name leaves a publishable 253-character record name');
  refused(nameOfLength(MAX_DOMAIN_NAME + 1), new RegExp(`at most ${MAX_DOMAIN_NAME} characters.*253`));
  refused(nameOfLength(253), /at most/);
  refused(nameOfLength(254), /at most 253 characters/);
});

test('domain name: at least two labels, no trailing dot, no empty label', () => {
  refused('localhost', /at least two labels/);
  refused('example.com.', /must not end with a dot/);
  refused('example..com', /empty label/);
  refused('.example.com', /empty label/);
  refused('', /must not be empty/);
});

test('domain name: not an address, URL, IP, wildcard or underscore name', () => {
  refused('https://example.com', /bare domain name/);
  refused('bob@example.com', /bare domain name/);
  refused('1.2.3.4', /not an IP address/);
  refused('*.example.com', /letters, digits and inner hyphens/);
  refused('_dmarc.example.com', /letters, digits and inner hyphens/);
  refused('-bad.example.com', /letters, digits and inner hyphens/);
  refused('bad-.example.com', /letters, digits and inner hyphens/);
});

test('selectors: an RSA and an Ed25519 selector sharing one random tag', () => {
  const a = newSelectors();
  const b = newSelectors();
  assert.match(a.rsa, /^plr-[0-9a-f]{8}$/);
  assert.equal(a.ed, a.rsa.replace('plr-', 'ple-'));
  assert.notEqual(a.rsa, b.rsa);
});

test('return path: bounces.<domain>', () => {
  assert.equal(bounceDomainFor('Example.com'), 'bounces.example.com');
});

test('records: DKIM ×2, return-path MX and SPF on the bounce domain, DMARC, tracking CNAME', () => {
  const records = expectedRecords(
    { name: 'example.com', rsa_selector: 'plr-1', rsa_public_txt: 'v=DKIM1; k=rsa; p=AAA', ed_selector: 'ple-1', ed_public_txt: 'v=DKIM1; k=ed25519; p=BBB' },
    { returnPathHost: 'Mail.Postline.Test', trackingHost: 'track.postline.test' },
  );
  assert.deepEqual(records.map((r) => [r.purpose, r.type, r.name, r.value]), [
    ['dkim', 'TXT', 'plr-1._domainkey.example.com', 'v=DKIM1; k=rsa; p=AAA'],
    ['dkim_ed25519', 'TXT', 'ple-1._domainkey.example.com', 'v=DKIM1; k=ed25519; p=BBB'],
    ['return_path', 'MX', 'bounces.example.com', 'mail.postline.test'],
    ['spf', 'TXT', 'bounces.example.com', 'v=spf1 a:mail.postline.test ~all'],
    ['dmarc', 'TXT', '_dmarc.example.com', 'v=DMARC1; p=none;'],
    ['tracking', 'CNAME', 'track.example.com', 'track.postline.test'],
  ]);
  assert.deepEqual(records.filter((r) => r.required).map((r) => r.purpose), ['dkim']);
});

test('spf: an address as base URL host becomes ip4:/ip6:', () => {
  assert.equal(spfRecordValue('203.0.113.7'), 'v=spf1 ip4:203.0.113.7 ~all');
  assert.equal(spfRecordValue('[2001:db8::1]'), 'v=spf1 ip6:2001:db8::1 ~all');
});

const RSA = 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvQ+AbC/12==';

test('dkim compare: the key matches however it was chunked, quoted or spaced', () => {
  assert.equal(compareDkim([RSA], RSA).status, 'verified');
  assert.equal(compareDkim(['v=DKIM1;k=rsa;p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A MIIBCgKCAQEAvQ+AbC/12=='], RSA).status, 'verified');
  assert.equal(compareDkim(['"v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A" "MIIBCgKCAQEAvQ+AbC/12=="'], RSA).status, 'verified');
  assert.equal(compareDkim(['p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvQ+AbC/12=='], RSA).status, 'verified', 'k defaults to rsa');
  assert.equal(compareDkim(['google-site-verification=x', RSA], RSA).status, 'verified');
});

test('dkim compare: another key, a revoked key, a non-DKIM TXT, nothing', () => {
  assert.equal(compareDkim(['v=DKIM1; k=rsa; p=MIIBOTHER'], RSA).status, 'mismatch');
  assert.match(compareDkim(['v=DKIM1; k=rsa; p='], RSA).detail!, /revoked/);
  assert.equal(compareDkim(['v=DKIM1; k=ed25519; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAvQ+AbC/12=='], RSA).status, 'mismatch', 'key type must match');
  assert.match(compareDkim(['hello'], RSA).detail!, /not a DKIM key/);
  assert.equal(compareDkim(null, RSA).status, 'missing');
});

test('spf compare: our mechanism present (any qualifier spelling), absent, duplicated, missing', () => {
  assert.equal(compareSpf(['v=spf1 a:mail.postline.test ~all'], 'mail.postline.test').status, 'verified');
  assert.equal(compareSpf(['v=spf1 include:_spf.example.net +a:MAIL.postline.test -all'], 'mail.postline.test').status, 'verified');
  assert.equal(compareSpf(['v=spf1 include:_spf.google.com ~all'], 'mail.postline.test').status, 'mismatch');
  assert.match(compareSpf(['v=spf1 a:mail.postline.test ~all', 'v=spf1 -all'], 'mail.postline.test').detail!, /more than one/);
  assert.equal(compareSpf(['some other txt'], 'mail.postline.test').status, 'missing');
  assert.equal(compareSpf(null, 'mail.postline.test').status, 'missing');
});

test('dmarc compare: any single DMARC record counts', () => {
  assert.equal(compareDmarc(['v=DMARC1; p=reject; rua=mailto:d@example.com']).status, 'verified');
  assert.equal(compareDmarc(['v=DMARC1; p=none', 'v=DMARC1; p=reject']).status, 'mismatch');
  assert.equal(compareDmarc(['v=spf1 -all']).status, 'missing');
});

test('host compare: case and trailing dot ignored', () => {
  assert.equal(compareHost(['Track.Postline.Test.'], 'track.postline.test', 'CNAME').status, 'verified');
  assert.match(compareHost(['elsewhere.test'], 'track.postline.test', 'CNAME').detail!, /points to elsewhere\.test/);
  assert.equal(compareHost(null, 'track.postline.test', 'CNAME').status, 'missing');
});
