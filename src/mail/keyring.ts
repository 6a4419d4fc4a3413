/**
 * Secrets at rest (DKIM private keys) encrypted with AES-256-GCM under a key derived from
 * POSTLINE_SECRET, and purpose-bound sub-keys of that secret (VERP, link signing, …).
 *
 * Derivation is HKDF-SHA256 with a distinct `info` per purpose, so the key that encrypts DKIM
 * keys is never the key that signs a bounce address, and rotating one use does not require
 * reasoning about the others. The ciphertext format is versioned:
 *   `v1.<iv base64url>.<tag base64url>.<ciphertext base64url>`
 * The purpose is also bound as GCM additional data, so a value encrypted for one purpose does
 * not decrypt under another.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const SALT = 'postline/v1';

/** A 32-byte key for one purpose, derived from the root secret. */
export function deriveKey(rootSecret: string, purpose: string): Buffer {
  if (!rootSecret) throw new Error('root secret is empty');
  return Buffer.from(hkdfSync('sha256', rootSecret, SALT, `postline:${purpose}`, 32));
}

export class SecretDecryptError extends Error {
  readonly code = 'secret_decrypt_failed';
  constructor(message: string) {
    super(message);
    this.name = 'SecretDecryptError';
  }
}

export function encryptSecret(plaintext: string, rootSecret: string, purpose = 'dkim-private-key'): string {
  const key = deriveKey(rootSecret, `encrypt:${purpose}`);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(purpose, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** Throws SecretDecryptError on a wrong secret, a wrong purpose or a tampered value. */
export function decryptSecret(encrypted: string, rootSecret: string, purpose = 'dkim-private-key'): string {
  const parts = encrypted.split('.');
  if (parts.length !== 4 || parts[0] !== 'v1') throw new SecretDecryptError('not an encrypted secret (expected v1.iv.tag.data)');
  const [iv, tag, ciphertext] = parts.slice(1).map((p) => Buffer.from(p, 'base64url'));
  if (iv.length !== 12 || tag.length !== 16) throw new SecretDecryptError('malformed encrypted secret');
  try {
    const decipher = createDecipheriv('aes-256-gcm', deriveKey(rootSecret, `encrypt:${purpose}`), iv);
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretDecryptError('secret does not decrypt: wrong root secret or tampered value');
  }
}
