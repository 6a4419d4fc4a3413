import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import { classifyBounce } from '../../../src/mail/bounces/verdict.js';
import { readReturnedMail } from '../../../src/mail/bounces/read.js';
import { BOUNCE_REASONS } from '../../../src/mail/bounces/reasons.js';

/** Whatever comes in from the internet, the reader answers with a value: it never throws or hangs. */
const dir = new URL('../../fixtures/bounces/', import.meta.url);
const samples = readdirSync(dir).filter((f) => f.endsWith('.eml')).map((f) => readFileSync(new URL(f, dir)));
const KINDS = ['bounce', 'complaint', 'delivered', 'auto_reply', 'unknown'];

function assertShape(read: Awaited<ReturnType<typeof readReturnedMail>>): void {
  assert.ok(KINDS.includes(read.kind));
  for (const r of read.recipients) {
    assert.ok(BOUNCE_REASONS.includes(r.reason));
    assert.equal(typeof r.dead, 'boolean');
    if (r.dead) assert.equal(r.side, 'dead');
    if (r.side === 'sender') assert.equal(r.dead, false);
  }
}

test('properties: random bytes never throw', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), async (bytes) => assertShape(await readReturnedMail(Buffer.from(bytes)))),
    { numRuns: 150 },
  );
});

test('properties: random text with bounce-like lines never throws', async () => {
  const line = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.constantFrom('Final-Recipient: rfc822;', 'Action: failed', 'Status: 5.1.1', 'Content-Type: multipart/report; boundary="x"', '--x', '--x--',
      'Content-Type: message/delivery-status', 'Subject: Undeliverable:', 'From: MAILER-DAEMON@x', '<a@b.example>:', 'Remote host said: 550', 'Feedback-Type: abuse', ''),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(line, { maxLength: 60 }), async (lines) => assertShape(await readReturnedMail(lines.join('\r\n')))),
    { numRuns: 200 },
  );
});

test('properties: every fixture, truncated anywhere or with bytes flipped, never throws', async () => {
  await fc.assert(
    fc.asyncProperty(fc.nat({ max: samples.length - 1 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 20 }), async (i, cut, flips) => {
      const raw = Buffer.from(samples[i].subarray(0, Math.floor(samples[i].length * cut)));
      for (const [at, byte] of flips) if (raw.length > 0) raw[at % raw.length] = byte;
      assertShape(await readReturnedMail(raw));
    }),
    { numRuns: 200 },
  );
});

test('properties: classifyBounce answers for any input and never calls a 4xx dead', () => {
  fc.assert(
    fc.property(fc.option(fc.string({ maxLength: 12 })), fc.option(fc.integer({ min: -1000, max: 1000 })), fc.option(fc.string({ maxLength: 400 })), fc.option(fc.string({ maxLength: 10 })), (status, reply, diagnostic, action) => {
      const v = classifyBounce({ status, reply, diagnostic, action });
      assert.ok(BOUNCE_REASONS.includes(v.reason));
      if (v.dead) assert.ok(v.permanent && !v.status?.startsWith('4'));
    }),
    { numRuns: 500 },
  );
});

test('properties: a huge body is read in bounded time', async () => {
  const big = `From: MAILER-DAEMON@x.example\r\nSubject: Undeliverable\r\n\r\n${'<a@b.example>: 550 5.1.1 user unknown\r\n'.repeat(50_000)}`;
  const started = Date.now();
  assertShape(await readReturnedMail(big));
  assert.ok(Date.now() - started < 20_000, 'no pathological backtracking');
});
