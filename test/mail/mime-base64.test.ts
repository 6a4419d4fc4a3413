import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode, wrap } from 'nodemailer/lib/base64';
import { encodeBase64Body } from '../../src/mail/mime/base64.js';

// The narrow base64 body writer against nodemailer's encode + wrap (docs/decisions/0041-narrow-mime-composer.md).

test('encodeBase64Body writes nodemailer\'s encode + wrap(76) for every length from 0 to 2,000 bytes and around its 76 KiB chunks', () => {
  const bytes = Buffer.from(Array.from({ length: 240_000 }, (_, i) => (i * 7919 + (i >> 8)) % 256));
  const lengths = [...Array.from({ length: 2001 }, (_, n) => n), ...[57 * 1024, 58 * 1024, 76 * 1024, 57 * 1366, 230_000].flatMap((n) => [n - 1, n, n + 1])];
  for (const n of lengths) {
    const content = bytes.subarray(0, n);
    assert.equal(encodeBase64Body(content), wrap(encode(content), 76), `${n} bytes`);
  }
});
