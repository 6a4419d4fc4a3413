import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Encoder, encode, wrap } from 'nodemailer/lib/qp';
import { encodeQuotedPrintable, encodeQuotedPrintableText, wrapQuotedPrintable } from '../../src/mail/mime/quoted-printable.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

// The narrow quoted-printable writer against nodemailer's: encodeQuotedPrintableText must
// escape what qp.encode escapes in the string's UTF-8 bytes, wrapQuotedPrintable must place the
// soft breaks exactly where qp.wrap places them, and encodeQuotedPrintable must write what the
// qp.Encoder stream writes for a body given in one chunk (docs/decisions/0041-narrow-mime-composer.md).

/**
 * Bodies built from the pieces wrap decides on: UTF-8 characters of 2, 3 and 4 bytes (escapes
 * that must stay together), '=' (always an escape), spaces, tabs and `.,!?` (break points),
 * CR, LF and CRLF, runs long enough to need a break anywhere, and whitespace at the end.
 */
function bodies(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const pieces = ['a', 'word', 'x'.repeat(70), 'y'.repeat(75), 'z'.repeat(76), 'é', 'ü', '€', '日本', '😀', '=', '==', ' ', '  ', '\t', '.', ',', '!', '?', '\r\n', '\n', '\r', '\r\r\n', '\n\r', 'A', '3D', '=3D', 'ß'.repeat(40), '\u0001', '\u007f', '\u0000', '_', '\ud83d', '\ude00', '\u00a0', '\uffff', '~', '<', '>'];
  return Array.from({ length: count }, () => {
    const n = int(4) === 0 ? int(12) : 20 + int(400);
    let s = '';
    for (let i = 0; i < n; i++) s += pick(pieces);
    if (int(5) === 0) s += pick([' ', '\t', '   ', ' \t', '\t \t']);
    return s;
  });
}

async function streamEncode(body: string): Promise<string> {
  const encoder = new Encoder();
  const chunks: Buffer[] = [];
  encoder.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise((resolve, reject) => encoder.on('end', resolve).on('error', reject));
  encoder.end(Buffer.from(body, 'utf8'));
  await done;
  return Buffer.concat(chunks).toString('latin1');
}

test('encodeQuotedPrintableText escapes what nodemailer\'s qp.encode escapes, over 4,000 seeded bodies (lone surrogates included)', () => {
  for (const [i, body] of bodies(4000, 0x51ed270b).entries()) {
    assert.equal(encodeQuotedPrintableText(body), encode(Buffer.from(body, 'utf8')), `body ${i}: ${JSON.stringify(body)}`);
  }
});

test('wrapQuotedPrintable places soft breaks where nodemailer\'s qp.wrap does, over 4,000 seeded encoded bodies', () => {
  let wrapped = 0;
  for (const [i, body] of bodies(4000, 0x9e3779b9).entries()) {
    const encoded = encode(Buffer.from(body, 'utf8'));
    const expected = wrap(encoded, 76);
    if (expected !== encoded) wrapped++;
    assert.equal(wrapQuotedPrintable(encoded), expected, `body ${i}: ${JSON.stringify(body)}`);
  }
  assert.ok(wrapped > 2500, `only ${wrapped} bodies needed a soft break`);
});

test('encodeQuotedPrintable writes what nodemailer\'s qp.Encoder stream writes, over 2,000 seeded bodies', async () => {
  for (const [i, body] of bodies(2000, 0x2545f491).entries()) {
    assert.equal(encodeQuotedPrintable(body), await streamEncode(body), `body ${i}: ${JSON.stringify(body)}`);
  }
});

test('encodeQuotedPrintable: an empty body and a body of only whitespace', async () => {
  for (const body of ['', ' ', '\t', '  \t ', ' '.repeat(200)]) {
    assert.equal(encodeQuotedPrintable(body), await streamEncode(body));
  }
});
