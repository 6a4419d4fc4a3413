import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import nodemailer from 'nodemailer';
import pino from 'pino';
import { ManualClock } from '../../src/clock.js';
import { startSmtpListener } from '../../src/inbound/smtp-listener.js';
import { deriveKey } from '../../src/mail/keyring.js';
import { encodeVerp } from '../../src/mail/verp.js';
import { startMailEnv } from '../helpers/mail-env.js';
import { aboutMessage, emailOf, fixture, sendReal, suppressionOf, typesOf, type SentMessage } from './env.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock, env: { POSTLINE_SMTP_PORT: '0' } });
const { pool } = env;
const listener = await startSmtpListener({ config: env.config, pool, clock, log: pino({ level: 'silent' }) }, { host: '127.0.0.1' });
after(() => listener.close());

/** A real SMTP client session against the listener: MAIL FROM:<> as DSNs use, STARTTLS when offered. */
function deliver(to: string[], raw: string | Buffer, from = '') {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: listener.port, secure: false, tls: { rejectUnauthorized: false } });
  return transport.sendMail({ envelope: { from, to }, raw }).finally(() => transport.close());
}

async function rejectionOf(to: string[], raw: string): Promise<{ responseCode?: number; response?: string; command?: string }> {
  try {
    await deliver(to, raw);
  } catch (err) {
    return err as { responseCode?: number; response?: string };
  }
  assert.fail(`mail to ${to.join(', ')} was accepted`);
}

async function bounceRows(messageId: string) {
  return (await pool.query('SELECT * FROM bounce_reports WHERE message_id = $1 ORDER BY id', [messageId])).rows;
}

/** dsn-hard-550.eml (Postfix) about `msg`: its first recipient (nobody@example.org) is ours. */
const hardDsn = (msg: SentMessage) => aboutMessage(fixture('dsn-hard-550.eml'), msg, ['nobody@example.org']);

test('smtp: a Postfix DSN (550 5.1.1) to the VERP address → hard_bounce, suppression hard_bounce, status bounced', async () => {
  const msg = await sendReal(env, 'nobody');
  assert.equal((await emailOf(env, msg.id)).status, 'delivered', 'a 250 first: the classic asynchronous bounce');
  const info = await deliver([msg.verp], hardDsn(msg));
  assert.match(info.response, /^250/);
  const email = await emailOf(env, msg.id);
  assert.equal(email.status, 'bounced');
  assert.deepEqual(typesOf(email.events), ['sent', 'delivered', 'hard_bounce']);
  const bounce = email.events[2];
  assert.equal(bounce.email, msg.to);
  assert.equal(bounce.data.enhancedCode, '5.1.1');
  assert.equal(bounce.data.source, 'bounce_mail');
  assert.equal(bounce.data.format, 'rfc3464');
  assert.deepEqual(bounce.data.bounce, { reason: 'user_unknown', category: 'dead', status: '5.1.1', diagnostic: bounce.data.response, mta: 'mx1.example.org' });
  assert.match(String(bounce.data.response), /^550 5\.1\.1 .*User unknown/);
  assert.deepEqual(await suppressionOf(env, msg.to).then((s) => [s.suppressed, s.reason]), [true, 'hard_bounce']);
  // Both recipient blocks are kept; the one naming someone else (gone@example.org) acts on nothing.
  const rows = await bounceRows(msg.id);
  assert.deepEqual(rows.map((r) => [r.final_recipient, r.classification, r.email, r.event_id !== null]), [
    [msg.to, 'hard', msg.to, true],
    ['gone@example.org', 'soft', null, false], // 5.2.1 mailbox disabled: suspended, not dead
  ]);
  const [inbound] = (await pool.query('SELECT * FROM inbound_messages WHERE message_id = $1', [msg.id])).rows;
  assert.equal(inbound.kind, 'bounce');
  assert.equal(inbound.envelope_from, '');
  assert.equal(inbound.envelope_to, msg.verp);
  assert.equal(inbound.account_id, env.acme.accountId);
});

test('smtp: the same DSN delivered twice → one hard_bounce event', async () => {
  const msg = await sendReal(env, 'nobody-twice');
  await deliver([msg.verp], hardDsn(msg));
  await deliver([msg.verp], hardDsn(msg));
  assert.deepEqual(typesOf((await emailOf(env, msg.id)).events), ['sent', 'delivered', 'hard_bounce']);
  assert.equal((await pool.query('SELECT count(*) AS n FROM inbound_messages WHERE message_id = $1', [msg.id])).rows[0].n, 2, 'both stored');
});

test('smtp: a Postfix "delayed" DSN (4.4.7) → deferred event, no suppression, status unchanged', async () => {
  const msg = await sendReal(env, 'slow');
  await deliver([msg.verp], aboutMessage(fixture('dsn-soft-delayed.eml'), msg, ['slow@example.net']));
  const email = await emailOf(env, msg.id);
  assert.equal(email.status, 'delivered');
  assert.deepEqual(typesOf(email.events), ['sent', 'delivered', 'deferred']);
  assert.equal(email.events[2].data.enhancedCode, '4.4.7');
  assert.equal(email.events[2].data.action, 'delayed');
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
});

test('smtp: a DSN that gave up on a 4.x.x status (Action: failed) → soft_bounce, no suppression', async () => {
  const msg = await sendReal(env, 'gave-up');
  const dsn = aboutMessage(fixture('dsn-soft-delayed.eml'), msg, ['slow@example.net']).replace('Action: delayed', 'Action: failed');
  await deliver([msg.verp], dsn);
  const email = await emailOf(env, msg.id);
  assert.deepEqual(typesOf(email.events), ['sent', 'delivered', 'soft_bounce']);
  assert.equal(email.status, 'bounced', 'the message did not arrive');
  assert.equal((email.events[2].data.bounce as { reason: string }).reason, 'network_error');
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
});

test('smtp: real Gmail and Exchange DSNs are classified hard (5.1.1, 5.1.10)', async () => {
  for (const [sample, address, code] of [['dsn-gmail.eml', 'no.such.user.42@gmail.com', '5.1.1'], ['dsn-exchange.eml', 'ghost@contoso.com', '5.1.10']]) {
    const msg = await sendReal(env, `ghost-${code}`);
    await deliver([msg.verp], aboutMessage(fixture(sample), msg, [address]));
    const email = await emailOf(env, msg.id);
    assert.equal(email.status, 'bounced', sample);
    assert.deepEqual(typesOf(email.events), ['sent', 'delivered', 'hard_bounce'], sample);
    assert.equal(email.events[2].data.enhancedCode, code, sample);
    assert.equal((await suppressionOf(env, msg.to)).reason, 'hard_bounce', sample);
  }
});

test('smtp: a DSN after a synchronous 550 adds no second hard_bounce', async () => {
  env.mx.setRule((rcpt) => (rcpt.startsWith('sync-gone@') ? 'reject' : 'accept'));
  try {
    const res = await env.send({ to: 'sync-gone@example.net', from: { email: 'hello@acme.test' }, subject: 'Hi', text: 'Hi' });
    const { id } = res.json();
    await env.deliverAll();
    assert.equal((await emailOf(env, id)).status, 'bounced');
    const verp = encodeVerp(id, 'bounces.acme.test', deriveKey(env.config.secret, 'verp'));
    await deliver([verp], hardDsn({ id, to: 'sync-gone@example.net', verp }));
    assert.deepEqual(typesOf((await emailOf(env, id)).events), ['sent', 'hard_bounce']);
  } finally {
    env.mx.setRule(() => 'accept');
  }
});

test('smtp: mail to an address that is neither VERP nor fbl@ → 550 5.1.1 at RCPT', async () => {
  const err = await rejectionOf(['postmaster@bounces.acme.test'], fixture('dsn-hard-550.eml'));
  assert.equal(err.responseCode, 550);
  assert.match(String(err.response), /^550 5\.1\.1 /);
});

test('smtp: a forged VERP address (wrong tag, or none) → 550 at RCPT, nothing stored', async () => {
  const msg = await sendReal(env, 'forged-verp');
  const tag = /=([0-9a-f]+)@/.exec(msg.verp)![1];
  const forged = msg.verp.replace(`=${tag}@`, `=${tag.replace(/^./, (c) => (c === '0' ? '1' : '0'))}@`);
  for (const to of [forged, `bounces+${msg.id}@bounces.acme.test`]) {
    const err = await rejectionOf([to], hardDsn(msg));
    assert.equal(err.responseCode, 550, to);
  }
  assert.equal((await emailOf(env, msg.id)).status, 'delivered');
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
  assert.equal((await pool.query('SELECT count(*) AS n FROM inbound_messages WHERE message_id = $1', [msg.id])).rows[0].n, 0);
});

test('smtp: an ARF report to fbl@ → spam event and suppression complaint, stored with source smtp', async () => {
  const msg = await sendReal(env, 'smtp-complaint');
  await deliver(['fbl@bounces.acme.test'], aboutMessage(fixture('arf-rfc822.eml'), msg, ['jane.doe@yahoo.com']), 'feedback@arf.mail.yahoo.com');
  const spam = (await emailOf(env, msg.id)).events.filter((e) => e.type === 'spam');
  assert.equal(spam.length, 1);
  assert.deepEqual(spam[0].data, { feedbackType: 'abuse', userAgent: 'Yahoo!-Mail-Feedback/2.0', source: 'smtp' });
  assert.equal((await suppressionOf(env, msg.to)).reason, 'complaint');
  const [row] = (await pool.query('SELECT * FROM fbl_reports WHERE message_id = $1', [msg.id])).rows;
  assert.equal(row.source, 'smtp');
});

test('smtp: an ARF to fbl@ naming only an address is stored unmatched (an address is no proof over open SMTP)', async () => {
  const msg = await sendReal(env, 'smtp-by-address');
  await deliver(['fbl@anything.example'], aboutMessage(fixture('arf-rfc5965-example.eml'), msg, ['user@example.com']));
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
  const rows = (await pool.query(`SELECT * FROM fbl_reports WHERE source = 'smtp' AND email = $1`, [msg.to])).rows;
  assert.equal(rows.length, 1);
  assert.equal(rows[0].matched, false);
});

test('smtp: the List-Unsubscribe mailto (subject "unsubscribe" to the VERP address) → suppression unsubscribe and one unsubscribe event', async () => {
  const msg = await sendReal(env, 'leaving');
  const mail = [`From: <${msg.to}>`, `To: <${msg.verp}>`, 'Subject: unsubscribe', 'Message-ID: <u1@example.net>', '', 'This message was automatically generated by Gmail.', ''].join('\r\n');
  await deliver([msg.verp], mail, msg.to);
  await deliver([msg.verp], mail.replace('u1@', 'u2@'), msg.to);
  const email = await emailOf(env, msg.id);
  assert.deepEqual(typesOf(email.events), ['sent', 'delivered', 'unsubscribe']);
  assert.deepEqual(email.events[2].data, { method: 'mailto', from: msg.to });
  assert.equal((await suppressionOf(env, msg.to)).reason, 'unsubscribe');
});

test('smtp: an auto-reply to a VERP address is stored as auto_reply and changes nothing', async () => {
  const msg = await sendReal(env, 'on-holiday');
  const mail = [`From: <${msg.to}>`, `To: <${msg.verp}>`, 'Subject: Out of office: unsubscribe', 'Auto-Submitted: auto-replied', '', 'Back on Monday.', ''].join('\r\n');
  await deliver([msg.verp], mail, msg.to);
  assert.deepEqual(typesOf((await emailOf(env, msg.id)).events), ['sent', 'delivered']);
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
  const [row] = (await pool.query('SELECT kind FROM inbound_messages WHERE message_id = $1', [msg.id])).rows;
  assert.equal(row.kind, 'auto_reply');
});

test('smtp: an ARF report sent to the VERP return path instead of fbl@ takes the complaint path', async () => {
  const msg = await sendReal(env, 'fbl-to-return-path');
  await deliver([msg.verp], aboutMessage(fixture('arf-headers-only.eml'), msg, ['john.smith@outlook.com']));
  const spam = (await emailOf(env, msg.id)).events.filter((e) => e.type === 'spam');
  assert.deepEqual(spam.map((e) => e.data.source), ['smtp']);
  assert.equal((await pool.query('SELECT count(*) AS n FROM inbound_messages WHERE message_id = $1', [msg.id])).rows[0].n, 0, 'kept in fbl_reports only');
});
