import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tlsConnect } from 'node:tls';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import { simpleParser } from 'mailparser';
import { ManualClock } from '../../src/clock.js';
import { RECIPIENT_DOMAIN, SENDER_DOMAIN } from '../helpers/mail-env.js';
import { startSubmissionEnv } from './env.js';

const env = await startSubmissionEnv();
const { pool, acme, cert } = env;
const FROM = `hello@${SENDER_DOMAIN}`;

/** nodemailer as an application would configure it: STARTTLS required, the API key as password. */
function transport(opts: { port?: number; secure?: boolean; pass?: string; method?: 'PLAIN' | 'LOGIN' } = {}) {
  return nodemailer.createTransport({
    host: '127.0.0.1',
    port: opts.port ?? env.listeners.port!,
    secure: opts.secure ?? false,
    requireTLS: !opts.secure,
    tls: { ca: cert.cert },
    auth: { user: 'api', pass: opts.pass ?? acme.liveKey, ...(opts.method ? { method: opts.method } : {}) },
  } as SMTPTransport.Options);
}

async function rowsOf(id: string) {
  const { rows } = await pool.query(
    `SELECT id, to_email, recipient_type, status, header_to, cc, bcc, track_opens, track_clicks FROM messages
      WHERE account_id = $1 AND (id = $2 OR group_id = $2) ORDER BY (id = $2) DESC, to_email`,
    [acme.accountId, id],
  );
  return rows;
}

const acceptedId = (response: string) => /(msg_[0-9a-f]{32})/.exec(response)?.[1];

test('submission: STARTTLS then AUTH PLAIN with an API key; the message is stored as an API send would be and 250 names its id', async () => {
  const info = await transport().sendMail({
    from: `Acme <${FROM}>`, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Hello over SMTP', text: 'Hi Ada', html: '<p>Hi <a href="https://acme.test/x">Ada</a></p>',
  });
  assert.match(info.response, /^250 2\.0\.0 Ok: queued as msg_[0-9a-f]{32}$/);
  const id = acceptedId(info.response)!;
  const [row] = await rowsOf(id);
  assert.equal(row.status, 'queued');
  assert.equal(row.to_email, `ada@${RECIPIENT_DOMAIN}`);
  const { rows: events } = await pool.query('SELECT type FROM events WHERE message_id = $1', [id]);
  assert.deepEqual(events.map((e) => e.type), ['sent']);
});

test('submission: envelope recipients decide delivery; To and Cc stay as written, Bcc is stripped, every copy DKIM-signed', async () => {
  await env.deliverAll();
  const before = env.mx.messages.length;
  const info = await transport().sendMail({
    from: FROM,
    to: [`ada@${RECIPIENT_DOMAIN}`, `team@${RECIPIENT_DOMAIN}`],
    cc: `carl@${RECIPIENT_DOMAIN}`,
    bcc: `boss@${RECIPIENT_DOMAIN}`,
    subject: 'Team news',
    text: 'News',
    // team@ is named in To but not in the envelope: shown, not delivered.
    envelope: { from: FROM, to: [`ada@${RECIPIENT_DOMAIN}`, `carl@${RECIPIENT_DOMAIN}`, `boss@${RECIPIENT_DOMAIN}`] },
  });
  const id = acceptedId(info.response)!;
  const rows = await rowsOf(id);
  assert.deepEqual(rows.map((r) => [r.to_email, r.recipient_type]), [
    [`ada@${RECIPIENT_DOMAIN}`, 'to'], [`boss@${RECIPIENT_DOMAIN}`, 'bcc'], [`carl@${RECIPIENT_DOMAIN}`, 'cc'],
  ]);
  await env.deliverAll();
  const received = env.mx.messages.slice(before);
  assert.deepEqual(received.map((m) => m.envelope.to[0]).sort(), [`ada@${RECIPIENT_DOMAIN}`, `boss@${RECIPIENT_DOMAIN}`, `carl@${RECIPIENT_DOMAIN}`]);
  for (const m of received) {
    const parsed = await simpleParser(m.raw);
    assert.equal(parsed.headers.get('bcc'), undefined, 'no copy carries a Bcc header');
    assert.doesNotMatch(m.raw.toString(), /boss@/i, 'the bcc recipient is named in no copy');
    assert.deepEqual((parsed.to as { value: { address: string }[] }).value.map((a) => a.address), [`ada@${RECIPIENT_DOMAIN}`, `team@${RECIPIENT_DOMAIN}`]);
    assert.deepEqual((parsed.cc as { value: { address: string }[] }).value.map((a) => a.address), [`carl@${RECIPIENT_DOMAIN}`]);
    assert.ok((await env.verifyDkim(m.raw)).some((r) => r.result === 'pass'), 'DKIM passes');
  }
});

test('submission: X-Postline-Track: none turns off the pixel and click rewriting, keeps the footer, and is removed', async () => {
  await env.deliverAll();
  const before = env.mx.messages.length;
  const info = await transport().sendMail({
    from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Untracked', html: '<html><body><p><a href="https://acme.test/plain">link</a></p></body></html>',
    headers: { 'X-Postline-Track': 'none', 'X-Campaign-Ref': 'spring' },
  });
  const [row] = await rowsOf(acceptedId(info.response)!);
  assert.deepEqual([row.track_opens, row.track_clicks], [false, false]);
  await env.deliverAll();
  const [m] = env.mx.messages.slice(before);
  const raw = m.raw.toString();
  assert.doesNotMatch(raw, /x-postline-track/i);
  assert.match(raw, /X-Campaign-Ref: spring/, 'other headers pass through');
  const parsed = await simpleParser(m.raw);
  assert.match(parsed.html as string, /href="https:\/\/acme\.test\/plain"/, 'link left as written');
  assert.doesNotMatch(parsed.html as string, /\/o\//, 'no open pixel');
  assert.match(parsed.html as string, /Unsubscribe/, 'footer still added');
});

test('submission: without the header both opens and clicks are tracked; "opens" alone keeps links as written', async () => {
  const tracked = await transport().sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Tracked', html: '<p>x</p>' });
  assert.deepEqual((await rowsOf(acceptedId(tracked.response)!)).map((r) => [r.track_opens, r.track_clicks]), [[true, true]]);
  const opens = await transport().sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Opens', html: '<p>x</p>', headers: { 'X-Postline-Track': 'opens' } });
  assert.deepEqual((await rowsOf(acceptedId(opens.response)!)).map((r) => [r.track_opens, r.track_clicks]), [[true, false]]);
  await assert.rejects(
    transport().sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Bad', text: 'x', headers: { 'X-Postline-Track': 'everything' } }),
    (err: { responseCode: number; response: string }) => err.responseCode === 550 && /5\.6\.0 validation_failed: headers\.X-Postline-Track/.test(err.response),
  );
});

test('submission: content is sent as written, never rendered as a template', async () => {
  const info = await transport().sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Braces {{ name }}', text: 'Literal {{ name }} and {% raw %}\n' });
  const { rows } = await pool.query('SELECT subject, text FROM messages WHERE id = $1', [acceptedId(info.response)]);
  assert.deepEqual(rows[0], { subject: 'Braces {{ name }}', text: 'Literal {{ name }} and {% raw %}\n' });
});

test('submission: implicit TLS port with AUTH LOGIN', async () => {
  const info = await transport({ port: env.listeners.tlsPort, secure: true, method: 'LOGIN' }).sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Over 465', text: 'x' });
  assert.match(info.response, /^250 2\.0\.0 Ok: queued as msg_/);
});

test('submission: a wrong API key is 535 5.7.8', async () => {
  await assert.rejects(
    transport({ pass: 'sk_live_' + 'x'.repeat(43) }).sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'x', text: 'x' }),
    (err: { responseCode: number; response: string }) => err.responseCode === 535 && /^535 5\.7\.8 /.test(err.response),
  );
});

test('submission: AUTH before STARTTLS is refused; no key travels in clear', async () => {
  const plain = nodemailer.createTransport({ host: '127.0.0.1', port: env.listeners.port!, secure: false, ignoreTLS: true, auth: { user: 'api', pass: acme.liveKey } });
  await assert.rejects(plain.sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'x', text: 'x' }), (err: { responseCode?: number }) => err.responseCode === 538);
});

test('submission: MAIL before AUTH is 530 5.7.0 and the connection stays open', async () => {
  const anonymous = nodemailer.createTransport({ host: '127.0.0.1', port: env.listeners.port!, secure: false, requireTLS: true, tls: { ca: cert.cert } });
  await assert.rejects(
    anonymous.sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'x', text: 'x' }),
    (err: { responseCode: number; response: string }) => err.responseCode === 530 && /^530 5\.7\.0 Authentication required/.test(err.response),
  );
});

test('submission: AUTH without TLS is allowed on a loopback listener when configured so', async () => {
  const dev = await env.startListeners((c) => ({ ...c, submission: { ...c.submission, tlsPort: undefined, allowInsecureAuth: true } }));
  const plain = nodemailer.createTransport({ host: '127.0.0.1', port: dev.port!, secure: false, ignoreTLS: true, auth: { user: 'api', pass: acme.liveKey } });
  const info = await plain.sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Dev', text: 'x' });
  assert.match(info.response, /^250 /);
});

test('submission: a From on an unverified domain is 550 5.7.1', async () => {
  await assert.rejects(
    transport().sendMail({ from: 'me@elsewhere.test', to: `ada@${RECIPIENT_DOMAIN}`, subject: 'x', text: 'x' }),
    (err: { responseCode: number; response: string }) => err.responseCode === 550 && /^550 5\.7\.1 sender_domain_unverified/.test(err.response),
  );
});

test('submission: 50 envelope recipients are taken, the 51st RCPT is 452 4.5.3', async () => {
  const fifty = Array.from({ length: 50 }, (_, i) => `r${i}@${RECIPIENT_DOMAIN}`);
  const ok = await transport().sendMail({ from: FROM, to: fifty[0], bcc: fifty.slice(1), subject: 'Fifty', text: 'x' });
  assert.equal(ok.accepted.length, 50);
  assert.equal((await rowsOf(acceptedId(ok.response)!)).length, 50);
  const refused = await transport().sendMail({ from: FROM, to: fifty[0], bcc: [...fifty.slice(1), `r50@${RECIPIENT_DOMAIN}`], subject: 'Fifty-one', text: 'x' });
  assert.deepEqual(refused.rejected, [`r50@${RECIPIENT_DOMAIN}`]);
  assert.match(String((refused.rejectedErrors as { response: string }[])[0].response), /^452 4\.5\.3 /);
});

test('submission: a message over the size limit is 552 5.3.4, one at the limit is taken', async () => {
  const small = await env.startListeners((c) => ({ ...c, bodyLimit: 4096 }));
  const send = (bytes: number) =>
    transport({ port: small.port }).sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Size', text: 'a'.repeat(bytes) });
  await assert.rejects(send(8000), (err: { responseCode: number; response: string }) => err.responseCode === 552 && /^552 5\.3\.4 /.test(err.response));
  assert.match((await send(1000)).response, /^250 /);
});

test('submission: a message counts as one request against the rate limit (the AUTH does not); past it, 451 4.7.0', async () => {
  // A minute of its own, on a clock that stands still: the window cannot roll over mid-test.
  const limited = await env.startListeners((c) => ({ ...c, rateLimits: { live: 3, test: 3 } }), new ManualClock('2031-01-01T00:00:10.000Z'));
  // A new connection and AUTH per message, as most applications send.
  const outcomes: string[] = [];
  for (let i = 0; i < 4; i++) {
    outcomes.push(await transport({ port: limited.port }).sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: `Rate ${i}`, text: 'x' }).then((r) => r.response, (e: { response: string }) => e.response));
  }
  assert.deepEqual(outcomes.slice(0, 3).map((r) => r.slice(0, 3)), ['250', '250', '250'], outcomes.join(' | '));
  assert.match(outcomes[3], /^451 4\.7\.0 rate_limited: .*retry in \d+ s/);
});

test('submission: a test key is checked like a live one and sends nothing', async () => {
  const { rows: [before] } = await pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [acme.accountId]);
  const info = await transport({ pass: acme.testKey }).sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Sandbox', text: 'x' });
  assert.match(info.response, /^250 2\.0\.0 Ok: sandbox sbx_[0-9a-f]{32} /);
  await assert.rejects(
    transport({ pass: acme.testKey }).sendMail({ from: 'me@elsewhere.test', to: `ada@${RECIPIENT_DOMAIN}`, subject: 'x', text: 'x' }),
    (err: { responseCode: number }) => err.responseCode === 550,
  );
  const { rows: [after] } = await pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [acme.accountId]);
  assert.equal(after.n, before.n);
});

test('submission: the same Message-ID within 24 h is answered as accepted and not sent twice', async () => {
  const mail = { from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Once', text: 'x', messageId: `<retry-${Date.now()}@app.acme.test>` };
  const first = await transport().sendMail(mail);
  const second = await transport().sendMail(mail);
  const id = acceptedId(first.response)!;
  assert.match(second.response, new RegExp(`^250 2\\.0\\.0 Ok: already accepted as ${id} `));
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND subject = 'Once'`, [acme.accountId]);
  assert.equal(rows[0].n, 1);
});

test('submission: a refused message releases its Message-ID, so the corrected one goes through', async () => {
  const messageId = `<fix-${Date.now()}@app.acme.test>`;
  await assert.rejects(transport().sendMail({ from: 'me@elsewhere.test', to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Fix', text: 'x', messageId }));
  const fixed = await transport().sendMail({ from: FROM, to: `ada@${RECIPIENT_DOMAIN}`, subject: 'Fix', text: 'x', messageId });
  assert.match(fixed.response, /^250 2\.0\.0 Ok: queued as msg_/);
});

test('submission: the implicit TLS port speaks TLS from the first byte with the configured certificate', async () => {
  const socket = tlsConnect({ host: '127.0.0.1', port: env.listeners.tlsPort!, ca: cert.cert });
  const greeting = await new Promise<string>((resolve, reject) => {
    socket.once('data', (d: Buffer) => resolve(d.toString()));
    socket.once('error', reject);
  });
  assert.ok(socket.authorized, 'certificate verified against the test CA');
  assert.match(greeting, /^220 .*Postline submission/);
  socket.destroy();
});
