import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decryptSecret, deriveKey, encryptSecret, SecretDecryptError } from '../../src/mail/keyring.js';
import { generateDkimKeyPair } from '../../src/mail/dkim.js';

const root = 'root-secret-for-keyring-tests';

test('keyring: a DKIM private key round-trips through encryption at rest', async () => {
  const { privateKeyPem } = await generateDkimKeyPair('ed25519');
  const stored = encryptSecret(privateKeyPem, root);
  assert.match(stored, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
  assert.doesNotMatch(stored, /PRIVATE KEY/);
  assert.equal(decryptSecret(stored, root), privateKeyPem);
});

test('keyring: the same plaintext encrypts differently each time (random IV)', () => {
  assert.notEqual(encryptSecret('x', root), encryptSecret('x', root));
});

test('keyring: a wrong root secret, a wrong purpose or a flipped byte fails to decrypt', () => {
  const stored = encryptSecret('secret material', root);
  assert.throws(() => decryptSecret(stored, 'another-root-secret'), SecretDecryptError);
  assert.throws(() => decryptSecret(stored, root, 'something-else'), SecretDecryptError);
  const parts = stored.split('.');
  const data = Buffer.from(parts[3], 'base64url');
  data[0] ^= 1;
  parts[3] = data.toString('base64url');
  assert.throws(() => decryptSecret(parts.join('.'), root), SecretDecryptError);
  assert.throws(() => decryptSecret('plain text', root), SecretDecryptError);
});

test('keyring: derived keys differ per purpose and are stable', () => {
  assert.deepEqual(deriveKey(root, 'verp'), deriveKey(root, 'verp'));
  assert.notDeepEqual(deriveKey(root, 'verp'), deriveKey(root, 'links'));
  assert.equal(deriveKey(root, 'verp').length, 32);
});
