import { test } from 'node:test';
import { createSecretKey } from 'node:crypto';
import assert from 'node:assert/strict';
import { decodeVerp, encodeVerp } from '../../src/mail/verp.js';
import { deriveKey } from '../../src/mail/keyring.js';
import { newId } from '../../src/ids.js';

const key = deriveKey('a-root-secret-of-sufficient-length', 'verp');

test('verp: an encoded return path decodes to its message id', () => {
  const id = newId('msg');
  const address = encodeVerp(id, 'bounces.example.com', key);
  assert.match(address, /^bounces\+msg_[0-9a-f]{32}=[0-9a-f]{12}@bounces\.example\.com$/);
  assert.ok(address.split('@')[0].length <= 64, 'local part within RFC 5321 limit');
  assert.deepEqual(decodeVerp(address, key), { ok: true, messageId: id, domain: 'bounces.example.com' });
});

test('verp: decoding survives angle brackets and an MTA that upper-cases the address', () => {
  const id = newId('msg');
  const address = encodeVerp(id, 'bounces.example.com', key);
  assert.equal(decodeVerp(`<${address.toUpperCase()}>`, key).ok, true);
});

test('verp: a tampered message id or tag is rejected, not attributed', () => {
  const id = newId('msg');
  const address = encodeVerp(id, 'bounces.example.com', key);
  const otherId = newId('msg');
  const forged = address.replace(id, otherId);
  assert.deepEqual(decodeVerp(forged, key), { ok: false, reason: 'bad_signature' });
  const badTag = address.replace(/=([0-9a-f])/, (_m, c: string) => `=${c === '0' ? '1' : '0'}`);
  assert.deepEqual(decodeVerp(badTag, key), { ok: false, reason: 'bad_signature' });
  assert.deepEqual(decodeVerp(address.replace(/=[0-9a-f]+@/, '=abc@'), key), { ok: false, reason: 'bad_signature' });
});

test('verp: an address signed with another key is rejected', () => {
  const address = encodeVerp(newId('msg'), 'bounces.example.com', deriveKey('another-root-secret-value', 'verp'));
  assert.deepEqual(decodeVerp(address, key), { ok: false, reason: 'bad_signature' });
});

test('verp: anything that is not a VERP address is not_verp', () => {
  for (const a of ['postmaster@example.com', 'bounces@example.com', 'bounces+msg_1@example.com', '']) {
    assert.deepEqual(decodeVerp(a, key), { ok: false, reason: 'not_verp' }, a);
  }
});

test('verp: the key imported once as a KeyObject gives the same return paths, and decodes those of the Buffer', () => {
  const imported = createSecretKey(key);
  for (let i = 0; i < 50; i++) {
    const id = newId('msg');
    const address = encodeVerp(id, 'bounces.example.com', imported);
    assert.equal(address, encodeVerp(id, 'bounces.example.com', key));
    assert.deepEqual(decodeVerp(address, imported), { ok: true, messageId: id, domain: 'bounces.example.com' });
  }
  assert.deepEqual(decodeVerp(encodeVerp(newId('msg'), 'b.example', createSecretKey(deriveKey('another-root-secret-value', 'verp'))), imported), { ok: false, reason: 'bad_signature' });
});
