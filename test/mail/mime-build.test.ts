import { test } from 'node:test';
import assert from 'node:assert/strict';
import MailComposer from 'nodemailer/lib/mail-composer';
import { simpleParser } from 'mailparser';
import { buildMimeSync, type MimeTreeNode } from '../../src/mail/mime-build.js';

// buildMimeSync must write exactly what nodemailer's streaming build() writes for the same tree.
// Two trees are compiled from the same options with a fixed base boundary (nodemailer otherwise
// draws it at random), one built each way, and the bytes compared.

type Options = ConstructorParameters<typeof MailComposer>[0];

const base: Options = {
  from: { name: 'Shop', address: 'shop@acme.test' },
  to: [{ name: '', address: 'ann@example.net' }],
  subject: 'Your order',
  messageId: '<msg_1@acme.test>',
  date: new Date('2026-11-26T12:00:00Z'),
  disableFileAccess: true,
  disableUrlAccess: true,
  newline: 'win',
  baseBoundary: 'fixedboundary0123',
};

const lorem = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. ';
const pdf = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 37) % 256));

const cases: Record<string, Options> = {
  'html and text, ASCII': { html: `<html><body><h1>Hi</h1><p>${lorem.repeat(30)}</p></body></html>`, text: lorem.repeat(5) },
  'short plain ASCII text only (7bit)': { text: 'Hello\nsecond line\n' },
  'html only': { html: '<p>Hello <a href="https://example.com/?a=1&b=2">there</a></p>' },
  'non-ASCII subject, names and bodies': {
    subject: 'Ваш заказ отправлен ✓ — ¡gracias!',
    from: { name: 'Łukasz «Shop»', address: 'shop@acme.test' },
    to: [{ name: '山田 太郎', address: 'taro@example.net' }],
    html: `<p>Grüße, Zoë! Café crème — ${'ünïcödé '.repeat(40)}</p>`,
    text: '日本語のテキストです。'.repeat(30),
  },
  'emoji and astral characters': { subject: '🎉 Party 🎉', text: '😀 '.repeat(100), html: '<p>𝒜𝒷𝒸 😀</p>' },
  'long lines past 76 and 998 octets': { text: 'x'.repeat(2500) + '\n' + 'word '.repeat(400), html: `<p>${'a'.repeat(1200)}</p>` },
  'trailing whitespace, tabs, CRLF, lone LF and lone CR': { text: 'line with spaces   \r\nline with tab\t\nlone\rcr\n\n  \n', html: '<p>a  </p>  \n<p>b\t</p>\r\n' },
  'dots at line starts and an empty line': { text: '.\n..leading dots\n\n.\nend' },
  'empty text part': { text: '', html: '<p>only html has content</p>' },
  'whitespace ending a body at a soft line break': { text: lorem.repeat(100), html: `<p>${lorem.repeat(3)}</p>   \t ` },
  'a body just under 64 KiB': { html: `<div>${'Zoë '.repeat(13_000)}</div>`, text: lorem.repeat(640) },
  'cc, reply-to, custom and List-Unsubscribe headers': {
    cc: [{ name: 'Bob', address: 'bob@example.net' }],
    replyTo: [{ name: '', address: 'help@acme.test' }],
    headers: { 'X-Campaign': 'spring', 'List-Unsubscribe': '<https://t.acme.test/u/x>, <mailto:u@acme.test>', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    html: '<p>x</p>',
    text: 'x',
  },
  'attachments: binary (base64) and text (quoted-printable)': {
    html: '<p>see attached</p>',
    text: 'see attached',
    attachments: [
      { filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' },
      { filename: 'notes.txt', content: Buffer.from('ünïcödé notes\nline two  \n'), contentType: 'text/plain' },
      { filename: 'Überweisung ✓.csv', content: Buffer.from('a,b\n1,2\n'), contentType: 'text/csv' },
    ],
  },
};

for (const [name, over] of Object.entries(cases)) {
  test(`buildMimeSync writes what nodemailer's build() writes: ${name}`, async () => {
    const options = { ...base, ...over } as Options;
    const fast = buildMimeSync(new MailComposer(options).compile() as unknown as MimeTreeNode);
    assert.ok(fast, 'the tree is covered by the synchronous walk');
    const streamed = await new MailComposer(options).compile().build();
    assert.equal(fast.toString('latin1'), streamed.toString('latin1'));
    // And it is a message a parser reads back.
    const parsed = await simpleParser(fast);
    assert.equal(parsed.subject, options!.subject);
  });
}

test('buildMimeSync leaves trees it does not cover to build(): stream content, raw messages, other newlines, bodies past 64 KiB', async () => {
  const { Readable } = await import('node:stream');
  const streamed = new MailComposer({ ...base, text: Readable.from(['a stream']) } as Options).compile();
  assert.equal(buildMimeSync(streamed as unknown as MimeTreeNode), null);
  const raw = new MailComposer({ raw: 'Subject: x\r\n\r\nbody\r\n' } as Options).compile();
  assert.equal(buildMimeSync(raw as unknown as MimeTreeNode), null);
  const unix = new MailComposer({ ...base, newline: 'unix', text: 'x' } as Options).compile();
  assert.equal(buildMimeSync(unix as unknown as MimeTreeNode), null);
  const big = new MailComposer({ ...base, text: lorem.repeat(650) } as Options).compile();
  assert.equal(buildMimeSync(big as unknown as MimeTreeNode), null);
});

// Seeded random messages over the characters the encoders treat specially (whitespace before
// line breaks, CR and LF alone and in pairs, '=', dots, control characters, non-ASCII and
// astral characters, long runs): every one must come out identical both ways.
test('buildMimeSync writes what build() writes for 400 seeded random messages', async () => {
  let seed = 0x2f6e2b1;
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed % n;
  };
  const pieces = [' ', '  ', '\t', '\r', '\n', '\r\n', '=', '.', '..', 'a', 'word', 'é', 'ß', '€', '日本', '😀', '\u0001', '\u007f', '<p>', '&amp;', 'x'.repeat(90), ' '.repeat(80)];
  const text = (max: number) => Array.from({ length: rand(max) }, () => pieces[rand(pieces.length)]).join('');
  let compared = 0;
  for (let i = 0; i < 400; i++) {
    const options = {
      ...base,
      subject: text(12),
      from: { name: text(4), address: 'shop@acme.test' },
      ...(rand(4) > 0 ? { text: text(400) } : {}),
      ...(rand(4) > 0 ? { html: text(600) } : {}),
      ...(rand(5) === 0 ? { attachments: [{ filename: `${text(3)}.txt`, content: Buffer.from(text(100)), contentType: rand(2) ? 'text/plain' : 'application/octet-stream' }] } : {}),
    } as Options;
    const fast = buildMimeSync(new MailComposer(options).compile() as unknown as MimeTreeNode);
    const streamed = await new MailComposer(options).compile().build();
    if (fast === null) continue; // left to build(): nothing to compare
    assert.equal(fast.toString('latin1'), streamed.toString('latin1'), `message ${i}`);
    compared++;
  }
  assert.ok(compared >= 390, `only ${compared} of 400 were written by the synchronous walk`);
});
