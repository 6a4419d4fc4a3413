import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { composeMessage, composeNarrow, ComposeError, isReservedHeader, type ComposeInput } from '../../src/mail/compose.js';

const base: ComposeInput = {
  from: { email: 'news@example.com', name: 'Example News' },
  to: [{ email: 'alice@example.org', name: 'Alice' }],
  cc: ['carol@example.org'],
  replyTo: 'support@example.com',
  subject: 'Hello Alice',
  html: '<h1>Hi</h1><p>Read <a href="https://example.com/post">the post</a>.</p><img src="https://t.example.com/o.gif">',
  text: 'Hi. Read the post: https://example.com/post',
  headers: { 'X-Campaign': 'autumn', 'Feedback-ID': 'c1:acc1:postline' },
  attachments: [{ filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 test'), contentType: 'application/pdf' }],
  messageId: 'msg_0193a1b2c3d4e5f60718293a4b5c6d7e@example.com',
  date: new Date('2026-11-20T10:15:30.000Z'),
  listUnsubscribe: { url: 'https://t.example.com/u/abc', mailto: 'unsub+abc@example.com' },
};

function headerBlock(raw: Buffer): string {
  const s = raw.toString('utf8');
  return s.slice(0, s.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' '); // unfolded
}

test('compose: the message carries every header and part that was asked for', async () => {
  const raw = await composeMessage(base);
  const parsed = await simpleParser(raw);
  assert.equal(parsed.messageId, '<msg_0193a1b2c3d4e5f60718293a4b5c6d7e@example.com>');
  assert.equal(parsed.subject, 'Hello Alice');
  assert.equal(parsed.date?.toISOString(), '2026-11-20T10:15:30.000Z');
  assert.deepEqual((parsed.from?.value ?? []).map((a) => [a.name, a.address]), [['Example News', 'news@example.com']]);
  assert.equal(parsed.headers.get('x-campaign'), 'autumn');
  assert.equal(parsed.headers.get('feedback-id'), 'c1:acc1:postline');
  assert.match(parsed.text ?? '', /Read the post/);
  assert.match(String(parsed.html), /<h1>Hi<\/h1>/);
  assert.equal(parsed.attachments.length, 1);
  assert.equal(parsed.attachments[0].filename, 'invoice.pdf');
  assert.equal(parsed.attachments[0].content.toString(), '%PDF-1.4 test');

  const head = headerBlock(raw);
  assert.match(head, /^To: Alice <alice@example\.org>$/m);
  assert.match(head, /^Cc: carol@example\.org$/m);
  assert.match(head, /^Reply-To: support@example\.com$/m);
  assert.match(head, /^MIME-Version: 1\.0$/m);
  assert.match(head, /^List-Unsubscribe: <https:\/\/t\.example\.com\/u\/abc>, <mailto:unsub\+abc@example\.com>$/m);
  assert.match(head, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
  assert.doesNotMatch(head, /^Bcc:/im);
});

test('compose: an html-only message gets a generated text part without the pixel', async () => {
  const raw = await composeMessage({ ...base, text: undefined, attachments: undefined });
  const parsed = await simpleParser(raw);
  assert.match(parsed.text ?? '', /HI/i);
  assert.match(parsed.text ?? '', /the post \[https:\/\/example\.com\/post\]/);
  assert.doesNotMatch(parsed.text ?? '', /o\.gif/);
  assert.match(headerBlock(raw), /multipart\/alternative/);
});

test('compose: non-ASCII subject and names are encoded, not passed raw', async () => {
  const raw = await composeMessage({ ...base, subject: 'Grüße – ✓', from: { email: 'news@example.com', name: 'Zoë' } });
  assert.doesNotMatch(headerBlock(raw), /[^\x00-\x7f]/);
  const parsed = await simpleParser(raw);
  assert.equal(parsed.subject, 'Grüße – ✓');
  assert.equal(parsed.from?.value[0].name, 'Zoë');
});

const injections: [string, Partial<ComposeInput>, string][] = [
  ['subject', { subject: 'Hi\r\nBcc: victim@evil.test' }, 'subject'],
  ['subject (bare LF)', { subject: 'Hi\nX-Evil: 1' }, 'subject'],
  ['from name', { from: { email: 'news@example.com', name: 'Eve\r\nBcc: x@evil.test' } }, 'from.name'],
  ['from email', { from: { email: 'news@example.com\r\nBcc: x@evil.test' } }, 'from.email'],
  ['to name', { to: [{ email: 'a@example.org', name: 'A\rB' }] }, 'to[0].name'],
  ['to address', { to: ['a@example.org\nBcc: x@evil.test'] }, 'to[0]'],
  ['cc address', { cc: ['c@example.org\r\n'] }, 'cc[0]'],
  ['replyTo', { replyTo: 'r@example.com\r\nX: y' }, 'replyTo'],
  ['custom header value', { headers: { 'X-Tag': 'a\r\nBcc: x@evil.test' } }, 'headers.X-Tag'],
  ['custom header name', { headers: { 'X-Tag\r\nBcc': 'x' } }, 'headers.X-Tag\r\nBcc'],
  ['attachment filename', { attachments: [{ filename: 'a.pdf\r\nX: y', content: Buffer.from('x') }] }, 'attachments[0].filename'],
  ['attachment type', { attachments: [{ filename: 'a.pdf', content: Buffer.from('x'), contentType: 'text/plain\r\nX: y' }] }, 'attachments[0].contentType'],
  ['unsubscribe url', { listUnsubscribe: { url: 'https://t.example.com/u\r\nX: y' } }, 'listUnsubscribe.url'],
  ['message id', { messageId: 'msg_1@example.com\r\nX: y' }, 'messageId'],
];

for (const [what, patch, field] of injections) {
  test(`compose: CR/LF in the ${what} is refused with a validation error naming the field`, async () => {
    await assert.rejects(composeMessage({ ...base, ...patch }), (err: unknown) => {
      assert.ok(err instanceof ComposeError);
      assert.equal(err.code, 'validation_failed');
      assert.equal(err.field, field);
      return true;
    });
  });
}

test('compose: several addresses smuggled into one address string are refused', async () => {
  await assert.rejects(composeMessage({ ...base, to: ['a@example.org, b@evil.test'] }), { reason: 'invalid_address' });
  await assert.rejects(composeMessage({ ...base, to: ['Eve <a@example.org>'] }), { reason: 'invalid_address' });
});

test('compose: structural headers cannot be overridden through custom headers', async () => {
  for (const name of ['From', 'to', 'Subject', 'DATE', 'Message-ID', 'MIME-Version', 'Content-Type', 'Content-Transfer-Encoding', 'DKIM-Signature', 'Return-Path', 'Received', 'Bcc', 'List-Unsubscribe', 'List-Unsubscribe-Post']) {
    assert.ok(isReservedHeader(name), name);
    await assert.rejects(composeMessage({ ...base, headers: { [name]: 'x' } }), { reason: 'reserved_header' }, name);
  }
});

test('compose: header names must be RFC 5322 field names', async () => {
  for (const name of ['X Tag', 'X:Tag', 'Ünicode', '']) {
    await assert.rejects(composeMessage({ ...base, headers: { [name]: 'x' } }), { reason: 'invalid_header_name' }, JSON.stringify(name));
  }
});

test('compose: a message without html and text is refused', async () => {
  await assert.rejects(composeMessage({ ...base, html: undefined, text: undefined }), { reason: 'missing_body' });
});

test('compose: each message draws its own boundaries, in nodemailer\'s format (16 random hex digits, the node number)', async () => {
  const boundaries = async () => [...(await composeMessage(base)).toString('latin1').matchAll(/boundary="([^"]+)"/g)].map((m) => m[1]);
  const [first, second] = [await boundaries(), await boundaries()];
  assert.equal(first.length, 2); // multipart/mixed around multipart/alternative
  assert.match(first[0], /^--_NmP-[0-9a-f]{16}-Part_1$/);
  assert.equal(first[1], first[0].replace(/Part_1$/, 'Part_2'));
  assert.notEqual(first[0], second[0]);
});

test('compose: a message Postline sends is written by the narrow writer (the same bytes for the boundary it drew)', async () => {
  const raw = await composeMessage(base);
  const drawn = /boundary="--_NmP-([0-9a-f]{16})-Part_1"/.exec(raw.toString('latin1'))![1];
  assert.ok(composeNarrow(base, drawn)?.equals(raw));
});
