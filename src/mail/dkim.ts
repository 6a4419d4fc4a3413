/**
 * DKIM: key generation (node:crypto), the DNS TXT record for each key, and signing. Every
 * message is signed twice over one body hash, RSA-SHA256 (what every verifier understands) and
 * Ed25519-SHA256 (RFC 8463; small and fast, verifiers that know it prefer it), relaxed/relaxed,
 * by the narrow signer in dkim/sign.ts, byte-identical to mailauth's dkimSign
 * (docs/decisions/0038-dkim-narrow-signer.md). mailauth stays the verifier.
 */
import { createPublicKey, generateKeyPair as generateKeyPairCb } from 'node:crypto';
import { promisify } from 'node:util';
import { dkimSignatureHeaders, dkimSignatureHeadersOfWritten, DkimSignatureError, type DkimSignature, type DkimSignatureAlgorithm, type DkimSignRequest } from './dkim/sign.js';

const generateKeyPair = promisify(generateKeyPairCb);

export type DkimAlgorithm = DkimSignatureAlgorithm;

export interface DkimKeyPair {
  algorithm: DkimAlgorithm;
  /** PKCS#8 PEM. Store it encrypted (keyring.ts). */
  privateKeyPem: string;
  /** SPKI PEM. */
  publicKeyPem: string;
}

/** One key to sign with: its algorithm, its selector (s=) and its PKCS#8 PEM. */
export type DkimSigningKey = DkimSignature;

/**
 * Header fields covered by the signatures; only those present are signed (every instance).
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
  const headers = signatureHeaders(opts, (request) => dkimSignatureHeaders(raw, request))!;
  return Buffer.concat([Buffer.from(headers, 'latin1'), raw]);
}

/**
 * signMessage for a message the narrow MIME writer left as strings (its header fields, folded,
 * and its body: src/mail/compose.ts's composeWritten): signed from those strings, and the
 * signed message made bytes once, DKIM-Signature fields and all, by `toBytes` (UTF-8, or with
 * its wire form as the build step makes it). The same bytes as signMessage of the composed
 * message (test/mail/dkim-written.test.ts), which it falls back to for strings the bytes would
 * read otherwise (docs/decisions/0050-build-step-from-written-strings.md).
 */
export async function signWrittenMessage(
  written: { headerFields: readonly string[]; body: string },
  opts: { domain: string; keys: DkimSigningKey[]; signTime?: Date; extraHeaders?: readonly string[] },
  toBytes: (message: string) => Buffer = (message) => Buffer.from(message, 'utf8'),
): Promise<Buffer> {
  const headers = signatureHeaders(opts, (request) => dkimSignatureHeadersOfWritten(written.headerFields, written.body, request));
  const message = `${written.headerFields.join('\r\n')}\r\n\r\n${written.body}`;
  if (headers === null) return signMessage(Buffer.from(message, 'utf8'), opts);
  return toBytes(headers + message);
}

/** The DKIM-Signature fields `make` writes for the request opts make, every failure a DkimSignError. */
function signatureHeaders(
  opts: { domain: string; keys: DkimSigningKey[]; signTime?: Date; extraHeaders?: readonly string[] },
  make: (request: DkimSignRequest) => string | null,
): string | null {
  if (opts.keys.length === 0) throw new DkimSignError('no DKIM keys given', []);
  // One t= for every signature, read once.
  const signTime = opts.signTime ?? new Date();
  try {
    return make({ domain: opts.domain, signatures: opts.keys, signTime, headerList: [...DKIM_SIGNED_HEADERS, ...(opts.extraHeaders ?? [])] });
  } catch (err) {
    const selector = err instanceof DkimSignatureError ? err.selector : undefined;
    const message = err instanceof Error ? err.message : String(err);
    throw new DkimSignError(`DKIM signing failed: ${selector ? `${selector}: ` : ''}${message}`, [{ selector, message }]);
  }
}
