import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Encoder, encode, wrap } from 'nodemailer/lib/qp';
import { encodeQuotedPrintable, encodeQuotedPrintableText, encodeSimpleQuotedPrintableText, isSimpleText, wrapQuotedPrintable } from '../../src/mail/mime/quoted-printable.js';
import { encodeTextBody } from '../../src/mail/mime/text-body.js';
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

/**
 * Simple text (LF and printable ASCII only, the usual per-recipient copy): lines of 60 to 90
 * characters built from words, spaces, '=' and punctuation, so soft breaks fall on every kind
 * of place around column 76; a line that differs from the one before only in its trailing
 * spaces; '=' next to spaces; empty lines; a body ending in spaces.
 */
function simpleBodies(count: number, seed: number): string[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const pieces = ['a', 'word', 'Lorem', ' ', '  ', '=', '= ', ' =', '.', ',', '!', '?', '3D', '=3D', '~', '<p>', 'x'.repeat(30), 'https://t.example.com/c/1?u=%2F&s=9'];
  return Array.from({ length: count }, () => {
    const lines: string[] = [];
    const n = 1 + int(20);
    for (let i = 0; i < n; i++) {
      if (i > 0 && int(5) === 0) {
        lines.push(lines[i - 1] + ' '.repeat(1 + int(3)));
        continue;
      }
      const target = int(6) === 0 ? int(10) : 60 + int(31);
      let line = '';
      while (line.length < target) line += pick(pieces);
      lines.push(line);
    }
    return lines.join('\n') + (int(4) === 0 ? ' '.repeat(1 + int(3)) : int(2) === 0 ? '\n' : '');
  });
}

test('encodeSimpleQuotedPrintableText escapes what qp.encode escapes, over 4,000 seeded simple bodies', () => {
  for (const [i, body] of simpleBodies(4000, 0x0048_51a9).entries()) {
    assert.ok(isSimpleText(body), `body ${i} is simple text`);
    assert.equal(encodeSimpleQuotedPrintableText(body), encode(Buffer.from(body, 'utf8')), `body ${i}: ${JSON.stringify(body)}`);
  }
});

test('a simple body in quoted-printable: what the qp.Encoder stream writes, every LF not after a CR made CRLF, over 2,000 seeded bodies', async () => {
  for (const [i, body] of simpleBodies(2000, 0x0048_e7c3).entries()) {
    const expected = (await streamEncode(body)).replace(/(?<!\r)\n/g, '\r\n');
    assert.equal(encodeTextBody(body, 'quoted-printable', true), expected, `body ${i}: ${JSON.stringify(body)}`);
    assert.equal(encodeTextBody(body, '7bit', true), body.replace(/(?<!\r)\n/g, '\r\n'), `body ${i} as 7bit`);
  }
});

test('isSimpleText: LF and printable ASCII only', () => {
  assert.ok(isSimpleText('') && isSimpleText('a = b ~\n\n<p>'));
  for (const c of ['\t', '\r', '\u0000', '\u001f', '\u007f', '\u0080', 'é', '😀', '\ud83d']) assert.ok(!isSimpleText(`ab${c}cd`), JSON.stringify(c));
});

test('wrapQuotedPrintable of CR-free text places soft breaks where qp.wrap does, every LF written as CRLF, over 4,000 seeded simple bodies', () => {
  let lfCuts = 0;
  for (const [i, body] of simpleBodies(4000, 0x0048_3a51).entries()) {
    const encoded = encode(Buffer.from(body, 'utf8'));
    const expected = wrap(encoded, 76);
    if (body.includes('\n')) lfCuts++;
    assert.equal(wrapQuotedPrintable(encoded, true), expected.replace(/(?<!\r)\n/g, '\r\n'), `body ${i}: ${JSON.stringify(body)}`);
  }
  assert.ok(lfCuts > 1000, `only ${lfCuts} bodies have a line break the wrap cuts after`);
});
