import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

/**
 * Checked on the bytes the test MX received: no line over 998
 * octets whatever the input (long words are encoded, structured headers that cannot be are
 * refused), and addresses with a UTF-8 local part are refused at the API (docs/sending.md).
 */

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool, mx, dns } = env;

const at = (local: string) => `${local}@${RECIPIENT_DOMAIN}`;

async function deliverTo(to: string, over: Record<string, unknown>) {
  const res = await env.send(basicEmail({ to, ...over }));
  assert.equal(res.statusCode, 202, res.body);
  await env.deliverAll();
  const got = mx.messages.filter((m) => m.envelope.to.includes(to));
  assert.equal(got.length, 1);
  return { id: res.json().id as string, raw: got[0].raw };
}

/** RFC 2047 decoding of an unstructured value, by the same parser as the rest (mailparser decodes Subject). */
async function decodeWords(value: string): Promise<string> {
  return String((await simpleParser(Buffer.from(`Subject: ${value}\r\n\r\n`))).subject);
}

function longestLine(raw: Buffer): number {
  let max = 0;
  let start = 0;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x0a) {
      max = Math.max(max, i - start - (raw[i - 1] === 0x0d ? 1 : 0));
      start = i + 1;
    }
  }
  return Math.max(max, raw.length - start);
}

test('header lines: a subject that fills a line exactly (Subject: + 989 octets = 998) goes as written', async () => {
  const subject = 'A'.repeat(989);
  const { raw } = await deliverTo(at('exact'), { subject });
  assert.ok(longestLine(raw) <= 998, String(longestLine(raw)));
  assert.match(raw.toString(), new RegExp(`\\r\\nSubject:\\s+${subject}\\r\\n`));
  assert.equal((await simpleParser(raw)).subject, subject);
});

test('header lines: one octet past it, and a 998-octet word, are RFC 2047-encoded: every line ≤ 998, the subject reads the same', async () => {
  for (const [local, subject] of [['past', 'B'.repeat(990)], ['max', 'C'.repeat(998)], ['mixed', `Offer ${'D'.repeat(990)}`]] as const) {
    const { raw } = await deliverTo(at(local), { subject });
    assert.ok(longestLine(raw) <= 998, `${local}: ${longestLine(raw)}`);
    assert.match(raw.toString(), /\r\nSubject: =\?UTF-8\?Q\?/);
    assert.equal((await simpleParser(raw)).subject, subject);
    const verdicts = await env.verifyDkim(raw);
    assert.deepEqual(verdicts.map((v) => v.result), ['pass', 'pass']);
  }
});

test('header lines: a subject past 998 octets is refused, at and past the limit', async () => {
  assert.equal((await env.send(basicEmail({ subject: 'E'.repeat(998) }), env.acme.test)).statusCode, 202);
  const res = await env.send(basicEmail({ subject: 'E'.repeat(999) }));
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().code, 'validation_failed');
});

test('header lines: a long custom header is encoded, a long UTF-8 one too; the body never has a line over 998', async () => {
  const value = 'x'.repeat(2000);
  const utf8 = 'ü'.repeat(1000);
  const html = `<p>${'word'.repeat(2000)}</p><p>${'ä'.repeat(3000)}</p>`;
  const { raw } = await deliverTo(at('custom'), { headers: { 'X-Long': value, 'X-Utf8': utf8, 'X-Fits': 'y'.repeat(990) }, html, text: 'z'.repeat(5000) });
  assert.ok(longestLine(raw) <= 998, String(longestLine(raw)));
  const parsed = await simpleParser(raw);
  assert.equal(await decodeWords(String(parsed.headers.get('x-long'))), value);
  assert.equal(await decodeWords(String(parsed.headers.get('x-utf8'))), utf8);
  assert.equal(parsed.headers.get('x-fits'), 'y'.repeat(990));
  assert.match(String(parsed.text), /z{5000}/);
  assert.match(String(parsed.html), /(word){2000}/);
});

test('header lines: a structured header with a word too long for a line is refused with 422 line_too_long; nothing stored', async () => {
  const before = (await pool.query('SELECT count(*)::int AS n FROM messages')).rows[0].n;
  for (const headers of [{ References: `<${'r'.repeat(1000)}@acme.test>` }, { 'In-Reply-To': `<${'r'.repeat(990)}@x>` }]) {
    for (const key of [env.acme.live, env.acme.test]) {
      const res = await env.send(basicEmail({ headers }), key);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().code, 'validation_failed');
      assert.equal(res.json().reason, 'line_too_long');
      assert.match(res.json().errors[0].field, /^headers\./);
    }
  }
  // A long References made of many ids folds between them and is accepted.
  const ok = await env.send(basicEmail({ headers: { References: Array.from({ length: 40 }, (_, i) => `<id${i}.${'r'.repeat(30)}@acme.test>`).join(' ') } }), env.acme.test);
  assert.equal(ok.statusCode, 202, ok.body);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages')).rows[0].n, before);
});

test('UTF-8 local parts: refused at the API in every address field, with a live and a test key alike', async () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ to: 'josé@example.org' }, 'to'],
    [{ cc: ['ünal@example.org'] }, 'cc[0]'],
    [{ bcc: ['Ωmega@example.org'] }, 'bcc[0]'],
    [{ replyTo: 'rené@example.org' }, 'replyTo'],
  ];
  for (const [over, field] of cases) {
    for (const key of [env.acme.live, env.acme.test]) {
      const res = await env.send(basicEmail(over), key);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal(res.json().code, 'validation_failed');
      assert.equal(res.json().errors[0].field, field);
      assert.match(res.json().errors[0].message, /non-ASCII/);
    }
  }
});

test('UTF-8 domains: accepted; the envelope carries the ASCII (punycode) form', async () => {
  dns.setRecords('xn--exmple-cua.net', 'MX', [{ exchange: `mx.${RECIPIENT_DOMAIN}`, priority: 10 }]);
  const res = await env.send(basicEmail({ to: 'ana@exämple.net' }));
  assert.equal(res.statusCode, 202, res.body);
  await env.deliverAll();
  // smtp-server shows the domain decoded; that no SMTPUTF8 was asked for shows it travelled as ASCII.
  const got = mx.messages.filter((m) => m.envelope.to.includes('ana@exämple.net'));
  assert.equal(got.length, 1);
  assert.equal(got[0].smtpUtf8, false);
  assert.equal((await app.inject({ url: `/api/v1/emails/${res.json().id}`, headers: env.acme.live })).json().status, 'delivered');
});

test('UTF-8 local parts: one that reaches the worker by another path fails as our fault: nothing sent, no bounce, no suppression', async () => {
  const res = await env.send(basicEmail({ to: at('plain') }));
  const { id } = res.json();
  await pool.query(`UPDATE messages SET to_email = 'josé@example.net' WHERE id = $1`, [id]);
  const before = mx.messages.length;
  await env.deliverAll();
  assert.equal(mx.messages.length, before);
  const s = (await app.inject({ url: `/api/v1/emails/${id}`, headers: env.acme.live })).json();
  assert.equal(s.status, 'failed');
  const last = s.events.at(-1);
  assert.equal(last.type, 'soft_bounce', 'a hard bounce means a dead address; this failure is ours');
  assert.equal(last.data.ourFault, true);
  assert.deepEqual([last.data.bounce.reason, last.data.bounce.category], ['rejected', 'sender']);
  assert.match(last.data.response, /SMTPUTF8/);
  const check = await app.inject({ url: '/api/v1/suppression?email=' + encodeURIComponent('josé@example.net'), headers: env.acme.live });
  assert.equal(check.json().suppressed, false);
});
