import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto, { type KeyObject } from 'node:crypto';
import { dkimSign, type DKIMSignOptions } from 'mailauth';
import { DKIM_SIGNED_HEADERS, generateDkimKeyPair, signMessage, type DkimKeyPair } from '../../src/mail/dkim.js';
import { dkimSignatureHeaders, type DkimSignature } from '../../src/mail/dkim/sign.js';
import { generateCorpus } from '../helpers/dkim-corpus.js';

// The narrow signer against the library it replaces: for the same message, keys, time and
// header list, RSA-SHA256 (PKCS#1 v1.5) and Ed25519 signatures are deterministic, so every
// DKIM-Signature header must come out byte-identical, b= included.
const CORPUS_SIZE = 2000;
const SEED = Number(process.env.DKIM_CORPUS_SEED ?? 0x5eed2026);
const DOMAIN = 'mail.example.test';
const SIGN_TIME = new Date('2026-11-27T06:00:00.750Z');

let rsa: DkimKeyPair;
let ed: DkimKeyPair;
let signatures: DkimSignature[];

// mailauth imports the PEM again for every signature (~1 ms for RSA), which would be a third of
// this file's CPU. The reference's output does not depend on it: while this file runs, it gets
// the KeyObject of a PEM already imported, as production did before the narrow signer
// (decision 0038). The narrow signer imported its own createPrivateKey binding and is unaffected.
const importKey = crypto.createPrivateKey;
const importedKeys = new Map<string, KeyObject>();
function cachedImport(input: Parameters<typeof importKey>[0]): KeyObject {
  const pem = (input as { key?: unknown }).key;
  if (!Buffer.isBuffer(pem) && typeof pem !== 'string') return importKey(input);
  const id = pem.toString();
  let key = importedKeys.get(id);
  if (!key) importedKeys.set(id, (key = importKey(input)));
  return key;
}
after(() => {
  (crypto as { createPrivateKey: typeof importKey }).createPrivateKey = importKey;
});

before(async () => {
  [rsa, ed] = await Promise.all([generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
  (crypto as { createPrivateKey: typeof importKey }).createPrivateKey = cachedImport as typeof importKey;
  signatures = [
    { algorithm: 'rsa', selector: 'pl1r', privateKeyPem: rsa.privateKeyPem },
    { algorithm: 'ed25519', selector: 'pl1e', privateKeyPem: ed.privateKeyPem },
  ];
});

async function mailauthHeaders(raw: Buffer, headerList: readonly string[], signTime = SIGN_TIME): Promise<string> {
  const result = await dkimSign(raw, {
    // mailauth reads headerList as a colon-separated string (its typings say string[]).
    headerList: headerList.join(':') as unknown as string[],
    signTime,
    signatureData: signatures.map((s) => ({
      signingDomain: DOMAIN,
      selector: s.selector,
      privateKey: s.privateKeyPem,
      algorithm: s.algorithm === 'rsa' ? 'rsa-sha256' : 'ed25519-sha256',
      canonicalization: 'relaxed/relaxed',
    })),
  } as DKIMSignOptions);
  assert.deepEqual(result.errors, []);
  return result.signatures;
}

test(`dkim differential: ${CORPUS_SIZE} generated messages sign byte-identically to mailauth (seed ${SEED})`, async () => {
  const corpus = generateCorpus(CORPUS_SIZE, SEED);
  const traits = new Map<string, number>();
  for (const message of corpus) {
    for (const trait of message.traits) traits.set(trait, (traits.get(trait) ?? 0) + 1);
    const expected = await mailauthHeaders(message.raw, DKIM_SIGNED_HEADERS);
    const actual = dkimSignatureHeaders(message.raw, { domain: DOMAIN, signatures, signTime: SIGN_TIME, headerList: DKIM_SIGNED_HEADERS });
    if (actual !== expected) {
      assert.fail(
        `message ${message.index} (seed ${SEED}; ${message.traits.join(', ')}) signs differently\n` +
          `message: ${JSON.stringify(message.raw.toString('latin1').slice(0, 2000))}\nmailauth:\n${expected}\nnarrow:\n${actual}`,
      );
    }
  }
  // The corpus must reach every case it is meant to cover, or the equality proves less.
  for (const trait of [
    'mixed-case name', 'repeated header', 'unsigned header', 'folded header', 'whitespace before colon', '8-bit header',
    'encoded word', 'very long header line', 'empty value', 'header trailing whitespace', 'few signed headers', 'no signed header',
    'empty body', 'body of only CRLFs', 'body of whitespace lines', 'whitespace-only line', 'leading whitespace', 'trailing whitespace',
    'trailing empty lines', 'trailing whitespace lines', 'no final line break', 'very long body line', 'long body (past 64 KiB)',
    'lone LF everywhere', 'some lone LF', 'lone CR in a header', 'lone CR in body', 'line starting with VT or FF',
  ]) {
    assert.ok((traits.get(trait) ?? 0) >= 3, `the corpus covers "${trait}" at least 3 times (got ${traits.get(trait) ?? 0})`);
  }
});

test('dkim differential: another header list, another time, and each key alone also match', async () => {
  const corpus = generateCorpus(60, SEED + 1);
  const headerList = ['subject', 'FROM', ' to ', 'Received', 'X-Mailer', 'content-type'];
  const signTime = new Date('2031-01-01T00:00:59.999Z');
  for (const message of corpus) {
    const expected = await mailauthHeaders(message.raw, headerList, signTime);
    assert.equal(dkimSignatureHeaders(message.raw, { domain: DOMAIN, signatures, signTime, headerList }), expected, `message ${message.index}`);
  }
  const raw = corpus[0].raw;
  const both = dkimSignatureHeaders(raw, { domain: DOMAIN, signatures, signTime, headerList }).split(/\r\n(?=DKIM-Signature:)/);
  for (const [i, one] of signatures.entries()) {
    const alone = dkimSignatureHeaders(raw, { domain: DOMAIN, signatures: [one], signTime, headerList });
    assert.equal(alone.replace(/\r\n$/, ''), both[i].replace(/\r\n$/, ''));
  }
});

test('dkim differential: signMessage prepends exactly the narrow headers to the untouched message', async () => {
  const [message] = generateCorpus(1, SEED + 2);
  const signed = await signMessage(message.raw, {
    domain: DOMAIN,
    keys: signatures.map((s) => ({ ...s })),
    signTime: SIGN_TIME,
  });
  const expected = await mailauthHeaders(message.raw, DKIM_SIGNED_HEADERS);
  assert.deepEqual(signed, Buffer.concat([Buffer.from(expected, 'latin1'), message.raw]));
});

test('dkim differential: a message without an empty line after its header is not signed by either', async () => {
  const raw = Buffer.from('From: a@mail.example.test\r\nSubject: no body separator\r\n');
  assert.equal(await mailauthHeaders(raw, DKIM_SIGNED_HEADERS), '\r\n', 'mailauth writes no signature');
  assert.throws(() => dkimSignatureHeaders(raw, { domain: DOMAIN, signatures, signTime: SIGN_TIME, headerList: DKIM_SIGNED_HEADERS }), /no empty line/);
});
