/**
 * The hot path's DKIM signer: one body hash for every signature, the signed header fields read
 * once from the header block, node:crypto `sign` with KeyObjects imported once per PEM. Its
 * output is byte-identical to mailauth's `dkimSign` for relaxed/relaxed RSA-SHA256 and
 * Ed25519-SHA256 (test/mail/dkim-differential.test.ts); see
 * docs/decisions/0038-dkim-narrow-signer.md for why it exists and what stays with mailauth.
 */
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { BoundedMap } from '../../lib/bounded-map.js';
import { parseHeaderFields, relaxedBodyHash, relaxedBodyHashOfText, relaxedHeader, relaxedWrittenHeader, selectSignedFields, splitMessage, writtenHeaderFields, type HeaderField } from './relaxed.js';

export type DkimSignatureAlgorithm = 'rsa' | 'ed25519';

export interface DkimSignature {
  algorithm: DkimSignatureAlgorithm;
  selector: string;
  privateKeyPem: string;
}

export interface DkimSignRequest {
  /** d=, an A-label domain. */
  domain: string;
  signatures: readonly DkimSignature[];
  /** t=, in whole seconds. */
  signTime: Date;
  /** Names of the header fields to sign; those absent from the message are left out of h=. */
  headerList: readonly string[];
}

/** What failed, per selector; the caller decides that one failure fails the message. */
export class DkimSignatureError extends Error {
  constructor(
    message: string,
    readonly selector?: string,
  ) {
    super(message);
    this.name = 'DkimSignatureError';
  }
}

/** KeyObjects are immutable; parsing a PEM costs more than an Ed25519 signature. */
const importedKeys = new BoundedMap<string, KeyObject>(1000);

function privateKey(pem: string): KeyObject {
  let key = importedKeys.get(pem);
  if (!key) {
    key = createPrivateKey({ key: pem, format: 'pem' });
    importedKeys.set(pem, key);
  }
  return key;
}

/** d= and s= go into the header as they are: printable ASCII without space or `;`. */
const TAG_VALUE = /^[\x21-\x3a\x3c-\x7e]+$/;
const FOLD_WIDTH = 76;

/**
 * The DKIM-Signature header fields for `raw`, each folded and ending in CRLF, in the order of
 * `signatures`: prepend them to the message. Throws DkimSignatureError on the first signature
 * that cannot be made (bad key, wrong key type, bad tag value, no header/body separator).
 */
export function dkimSignatureHeaders(raw: Buffer, request: DkimSignRequest): string {
  if (!TAG_VALUE.test(request.domain)) throw new DkimSignatureError(`invalid signing domain ${JSON.stringify(request.domain)}`);
  const message = splitMessage(raw);
  if (!message) throw new DkimSignatureError('the message has no empty line between header and body');
  return signatureHeaders(parseHeaderFields(message.headerText), relaxedBodyHash(message.body), request, relaxedHeader);
}

/**
 * dkimSignatureHeaders for the message the header fields and body make when joined (fields by
 * CRLF, then an empty line, then the body) and written in UTF-8, read from the strings the MIME
 * writer left rather than from those bytes: no split, no parse of the header block, the body
 * hashed from the string. Null when the strings are not read the way the bytes would be (see
 * writtenHeaderFields and relaxedBodyHashOfText): sign the bytes then.
 */
export function dkimSignatureHeadersOfWritten(headerFields: readonly string[], body: string, request: DkimSignRequest): string | null {
  if (!TAG_VALUE.test(request.domain)) throw new DkimSignatureError(`invalid signing domain ${JSON.stringify(request.domain)}`);
  const fields = writtenHeaderFields(headerFields);
  const bodyHash = fields && relaxedBodyHashOfText(body);
  if (!fields || !bodyHash) return null;
  return signatureHeaders(fields, bodyHash, request, relaxedWrittenHeader);
}

function signatureHeaders(fields: HeaderField[], bodyHash: Buffer, request: DkimSignRequest, relaxed: (text: string) => string): string {
  const signed = selectSignedFields(fields, request.headerList);
  const h = signed.map((field) => field.name).join(': ');
  const signedHeaders = Buffer.from(signed.map((field) => `${relaxed(field.text)}\r\n`).join(''), 'latin1');
  const bh = bodyHash.toString('base64');
  const t = Math.floor(request.signTime.getTime() / 1000);

  let out = '';
  for (const signature of request.signatures) {
    if (!TAG_VALUE.test(signature.selector)) throw new DkimSignatureError(`invalid selector ${JSON.stringify(signature.selector)}`, signature.selector);
    let key: KeyObject;
    try {
      key = privateKey(signature.privateKeyPem);
    } catch (err) {
      throw new DkimSignatureError((err as Error).message, signature.selector);
    }
    if (key.asymmetricKeyType !== signature.algorithm) {
      throw new DkimSignatureError(`Invalid key type: "${key.asymmetricKeyType}" (expecting "${signature.algorithm}")`, signature.selector);
    }
    const a = signature.algorithm === 'rsa' ? 'rsa-sha256' : 'ed25519-sha256';
    const tags = `v=1; a=${a}; c=relaxed/relaxed; d=${request.domain}; h=${h}; q=dns/txt; s=${signature.selector}; t=${t}; bh=${bh}; b=`;
    // The signature header signs itself last, relaxed, with b= empty and no CRLF (§3.7).
    const input = Buffer.concat([signedHeaders, Buffer.from(`dkim-signature:${tags}`, 'latin1')]);
    const b =
      signature.algorithm === 'rsa'
        ? sign('sha256', input, key)
        : // RFC 8463: Ed25519 signs the SHA-256 of the header hash input, not the input itself.
          sign(null, createHash('sha256').update(input).digest(), key);
    out += `${fold(`DKIM-Signature: ${tags}${spaceEvery75(b.toString('base64'))}`)}\r\n`;
  }
  return out;
}

/** The b= value split by a space every 75 characters, counted from the `b=`. */
function spaceEvery75(b: string): string {
  const value = `b=${b}`;
  let out = value.slice(0, 75);
  for (let i = 75; i < value.length; i += 75) out += ` ${value.slice(i, i + 75)}`;
  return out.slice(2);
}

/**
 * Folds a one-line header into lines of at most 76 characters where it can: each line breaks
 * before the last whitespace run of its 76-character window; a window without such a run
 * (or with one only at its start) runs on to the end of the word it cuts.
 */
function fold(line: string): string {
  let out = '';
  let pos = 0;
  while (line.length - pos >= FOLD_WIDTH) {
    const windowEnd = pos + FOLD_WIDTH;
    let j = windowEnd - 1;
    while (j >= pos && !isSpace(line.charCodeAt(j))) j--;
    while (j >= pos && isSpace(line.charCodeAt(j))) j--;
    let end = j + 1;
    if (j < pos || end === pos) {
      end = windowEnd;
      while (end < line.length && !isSpace(line.charCodeAt(end))) end++;
    }
    out += line.slice(pos, end);
    pos = end;
    if (pos < line.length) out += '\r\n';
  }
  return out + line.slice(pos);
}

function isSpace(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d);
}
