/**
 * DKIM: key generation (node:crypto), the DNS TXT record for each key, and signing with
 * mailauth. Every message is signed twice in one pass over the bytes, RSA-SHA256 (what every
 * verifier understands) and Ed25519-SHA256 (RFC 8463; small and fast, verifiers that know
 * it prefer it), relaxed/relaxed.
 */
import { createPublicKey, generateKeyPair as generateKeyPairCb } from 'node:crypto';
import { promisify } from 'node:util';
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import { installKeyImportCache } from './key-import-cache.js';

installKeyImportCache();

const generateKeyPair = promisify(generateKeyPairCb);

export type DkimAlgorithm = 'rsa' | 'ed25519';

export interface DkimKeyPair {
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. Store it encrypted (keyring.ts). */
  privateKeyPem: string;
  /** SPKI PEM. */
  publicKeyPem: string;
}

export interface DkimSigningKey {
  algorithm: DkimAlgorithm;
  selector: string;
  privateKeyPem: string;
}

/**
 * Header fields covered by the signatures, in this order; mailauth signs only those present.
 * Received, Return-Path and the like are left out because relays add or rewrite them.
 */
export const DKIM_SIGNED_HEADERS = [
  'From', 'To', 'Cc', 'Subject', 'Date', 'Message-ID', 'MIME-Version', 'Content-Type',
  'Reply-To', 'List-Unsubscribe', 'List-Unsubscribe-Post',
] as const;

export class DkimSignError extends Error {
  readonly code = 'dkim_sign_failed';
  constructor(
    message: string,
    readonly failures: { selector?: string; message: string }[],
  ) {
    super(message);
    this.name = 'DkimSignError';
  }
}

export async function generateDkimKeyPair(algorithm: DkimAlgorithm): Promise<DkimKeyPair> {
  const encoding = {
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  } as const;
  const { publicKey, privateKey } =
    algorithm === 'rsa'
      ? await generateKeyPair('rsa', { modulusLength: 2048, ...encoding })
      : await generateKeyPair('ed25519', encoding);
  return { algorithm, privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** Where the key is published: `<selector>._domainkey.<domain>`. */
export function dkimRecordName(selector: string, domain: string): string {
  return `${selector}._domainkey.${domain.toLowerCase().replace(/\.$/, '')}`;
}

/**
 * The TXT value to publish. RSA: `p=` is the base64 DER SubjectPublicKeyInfo (RFC 6376).
 * Ed25519: `p=` is the raw 32-byte public key, not the SPKI (RFC 8463 §4).
 * A DNS host splits the RSA value (~400 chars) into 255-byte strings; that is fine.
 */
export function dkimTxtRecord(algorithm: DkimAlgorithm, publicKeyPem: string): string {
  const key = createPublicKey(publicKeyPem);
  if (key.asymmetricKeyType !== algorithm) {
    throw new Error(`expected a ${algorithm} public key, got ${key.asymmetricKeyType}`);
  }
  if (algorithm === 'rsa') {
    const der = key.export({ type: 'spki', format: 'der' });
    return `v=DKIM1; k=rsa; p=${der.toString('base64')}`;
  }
  const raw = Buffer.from(key.export({ format: 'jwk' }).x as string, 'base64url');
  return `v=DKIM1; k=ed25519; p=${raw.toString('base64')}`;
}

/**
 * Sign `raw` with every key (normally one RSA and one Ed25519) for `domain` (the d= tag,
 * which must be the From domain for DMARC alignment). Returns the message with the
 * DKIM-Signature headers prepended. Any key that fails to sign fails the whole call: an
 * unsigned message must not leave by accident. `extraHeaders` are signed too when present
 * (a TLS report's TLS-Report-Domain, for instance).
 */
export async function signMessage(
  raw: Buffer,
  opts: { domain: string; keys: DkimSigningKey[]; signTime?: Date; extraHeaders?: readonly string[] },
): Promise<Buffer> {
  if (opts.keys.length === 0) throw new DkimSignError('no DKIM keys given', []);
  // Always a fixed t=: without signTime mailauth reads the clock once for the header it signs
  // and again for the header it writes, and a second boundary between the two (an RSA signing
  // takes milliseconds) gives a signature that cannot verify.
  const signTime = opts.signTime ?? new Date();
  const signatureData: DKIMSignOptions[] = opts.keys.map((k) => ({
    signingDomain: opts.domain,
    selector: k.selector,
    privateKey: k.privateKeyPem,
    algorithm: k.algorithm === 'rsa' ? 'rsa-sha256' : 'ed25519-sha256',
    canonicalization: 'relaxed/relaxed',
  }));
  const result = await dkimSign(raw, {
    // mailauth reads headerList as a colon-separated string (its typings say string[]).
    headerList: [...DKIM_SIGNED_HEADERS, ...(opts.extraHeaders ?? [])].join(':') as unknown as string[],
    signTime,
    signatureData,
  } as DKIMSignOptions);
  const failures = (result.errors ?? []).map((e) => {
    const entry = e as unknown as { selector?: string; err?: Error };
    return { selector: entry.selector, message: entry.err?.message ?? String(e) };
  });
  const signatureCount = (result.signatures.match(/^DKIM-Signature:/gim) ?? []).length;
  if (failures.length > 0 || signatureCount !== opts.keys.length) {
    throw new DkimSignError(`DKIM signing failed: ${failures.map((f) => `${f.selector}: ${f.message}`).join('; ') || 'missing signature'}`, failures);
  }
  return Buffer.concat([Buffer.from(result.signatures, 'utf8'), raw]);
}
