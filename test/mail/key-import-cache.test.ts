import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { generateDkimKeyPair } from '../../src/mail/dkim.js';

test('key import cache: the same PEM gives the same KeyObject; other inputs pass through', async () => {
  const { privateKeyPem } = await generateDkimKeyPair('rsa');
  const a = crypto.createPrivateKey({ key: Buffer.from(privateKeyPem), format: 'pem' });
  const b = crypto.createPrivateKey({ key: Buffer.from(privateKeyPem), format: 'pem' });
  assert.equal(a, b);
  assert.equal(a.asymmetricKeyType, 'rsa');
  const plain = crypto.createPrivateKey(privateKeyPem);
  assert.equal(plain.asymmetricKeyType, 'rsa');
  const other = await generateDkimKeyPair('ed25519');
  const c = crypto.createPrivateKey({ key: other.privateKeyPem, format: 'pem' });
  assert.notEqual(c, a);
  assert.equal(c.asymmetricKeyType, 'ed25519');
});
