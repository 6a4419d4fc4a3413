import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { startMailEnv } from '../helpers/mail-env.js';
import { aboutMessage, emailOf, fixture, sendReal, suppressionOf, typesOf } from './env.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { app, pool } = env;
const KEY = env.config.fblSecret;

function post(body: string | Buffer, opts: { key?: string | null; query?: boolean; contentType?: string } = {}) {
  const key = opts.key === undefined ? KEY : opts.key;
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'message/rfc822' };
  if (key !== null && !opts.query) headers['x-fbl-key'] = key;
  const url = key !== null && opts.query ? `/api/fbl/inbound?key=${encodeURIComponent(key)}` : '/api/fbl/inbound';
  return app.inject({ method: 'POST', url, headers, payload: body });
}

async function reportRow(id: string | null, column = 'message_id') {
  const { rows } = await pool.query(`SELECT * FROM fbl_reports WHERE ${column} = $1 ORDER BY id`, [id]);
  return rows;
}

async function assertComplaint(messageId: string, email: string, data: Record<string, unknown>) {
  assert.deepEqual(await suppressionOf(env, email).then((s) => [s.suppressed, s.reason]), [true, 'complaint']);
  const spam = (await emailOf(env, messageId)).events.filter((e) => e.type === 'spam');
  assert.equal(spam.length, 1);
  assert.equal(spam[0].email, email);
  assert.deepEqual(spam[0].data, data);
}

test('fbl: a Yahoo-style report (original as message/rfc822) is matched by Message-ID → 202, suppression complaint, spam event', async () => {
  const msg = await sendReal(env, 'jane');
  const res = await post(aboutMessage(fixture('arf-rfc822.eml'), msg, ['jane.doe@yahoo.com']));
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { matched: true, messageId: msg.id, email: msg.to });
  await assertComplaint(msg.id, msg.to, { feedbackType: 'abuse', userAgent: 'Yahoo!-Mail-Feedback/2.0', source: 'http' });
  const [row] = await reportRow(msg.id);
  assert.equal(row.matched, true);
  assert.equal(row.matched_by, 'message_id');
  assert.equal(row.source, 'http');
  assert.equal(row.account_id, env.acme.accountId);
  assert.ok(row.event_id?.startsWith('evt_'));
  assert.ok(row.raw.toString().includes('Yahoo!-Mail-Feedback/2.0'), 'the raw report is stored');
});

test('fbl: a Microsoft JMRP-style report (text/rfc822-headers, folded Message-ID, recipient redacted) is matched by Message-ID', async () => {
  const msg = await sendReal(env, 'john');
  const res = await post(aboutMessage(fixture('arf-headers-only.eml'), msg, ['john.smith@outlook.com']), { contentType: 'message/feedback-report' });
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { matched: true, messageId: msg.id, email: msg.to });
  await assertComplaint(msg.id, msg.to, { feedbackType: 'abuse', userAgent: 'Hotmail FBL', source: 'http' });
});

test('fbl: the RFC 5965 example (foreign Message-ID) is matched by Original-Rcpt-To → the most recent message to that address', async () => {
  const older = await sendReal(env, 'rfc-user');
  clock.advance(60_000);
  const newer = await sendReal(env, 'rfc-user');
  const res = await post(aboutMessage(fixture('arf-rfc5965-example.eml'), newer, ['user@example.com']), { contentType: 'text/plain' });
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { matched: true, messageId: newer.id, email: newer.to });
  await assertComplaint(newer.id, newer.to, { feedbackType: 'abuse', userAgent: 'SomeGenerator/1.0', source: 'http' });
  assert.deepEqual(typesOf((await emailOf(env, older.id)).events).filter((t) => t === 'spam'), []);
  assert.equal((await reportRow(newer.id))[0].matched_by, 'address');
});

test('fbl: without a Message-ID the original To identifies the address (match by address)', async () => {
  const msg = await sendReal(env, 'no-msgid');
  const sample = aboutMessage(fixture('arf-rfc822.eml'), msg, ['jane.doe@yahoo.com']).replace(/^Message-ID: <msg_[^\n]*\n/m, '');
  assert.ok(!sample.includes(`<${msg.id}@`), 'the original Message-ID is gone');
  const noVerp = sample.replaceAll(msg.verp, 'bounces@acme.test');
  const res = await post(noVerp);
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { matched: true, messageId: msg.id, email: msg.to });
  assert.equal((await reportRow(msg.id))[0].matched_by, 'address');
});

test('fbl: without a Message-ID a signed VERP Original-Mail-From identifies the message', async () => {
  const msg = await sendReal(env, 'by-verp');
  const sample = aboutMessage(fixture('arf-headers-only.eml'), msg).replace(/^Message-ID:\r?\n <msg_[^\n]*\n/m, '');
  assert.ok(!sample.includes(`<${msg.id}@`) && sample.includes(`original-mail-from: <${msg.verp}>`));
  const res = await post(sample);
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.json().messageId, msg.id);
  assert.equal((await reportRow(msg.id))[0].matched_by, 'return_path');
});

test('fbl: the same report twice → one spam event; both reports stored, the second without an event', async () => {
  const msg = await sendReal(env, 'twice');
  const body = aboutMessage(fixture('arf-rfc822.eml'), msg, ['jane.doe@yahoo.com']);
  const [a, b] = await Promise.all([post(body), post(body)]);
  assert.equal(a.statusCode, 202);
  assert.equal(b.statusCode, 202);
  assert.deepEqual(b.json(), a.json());
  assert.equal((await emailOf(env, msg.id)).events.filter((e) => e.type === 'spam').length, 1);
  const rows = await reportRow(msg.id);
  assert.equal(rows.length, 2);
  assert.equal(rows.filter((r) => r.event_id !== null).length, 1);
});

test('fbl: a not-spam report is matched and stored but suppresses nothing', async () => {
  const msg = await sendReal(env, 'rescued');
  const body = aboutMessage(fixture('arf-rfc822.eml'), msg, ['jane.doe@yahoo.com']).replace('Feedback-Type: abuse', 'Feedback-Type: not-spam');
  const res = await post(body);
  assert.equal(res.statusCode, 202);
  assert.equal(res.json().matched, true);
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
  assert.deepEqual(typesOf((await emailOf(env, msg.id)).events), ['sent', 'delivered']);
  assert.equal((await reportRow(msg.id))[0].feedback_type, 'not-spam');
});

test('fbl: the key is accepted as ?key= too', async () => {
  const msg = await sendReal(env, 'query-key');
  const res = await post(aboutMessage(fixture('arf-rfc822.eml'), msg), { query: true });
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.json().messageId, msg.id);
});

test('fbl: a missing or forged key → 401 unauthorized (header and query forms), nothing stored, nothing suppressed', async () => {
  const msg = await sendReal(env, 'forged');
  const body = aboutMessage(fixture('arf-rfc822.eml'), msg);
  const before = (await pool.query('SELECT count(*) AS n FROM fbl_reports')).rows[0].n;
  for (const opts of [{ key: null }, { key: 'wrong' }, { key: `${KEY}x` }, { key: KEY.slice(0, -1) }, { key: 'wrong', query: true }, { key: '', query: true }]) {
    const res = await post(body, opts);
    assert.equal(res.statusCode, 401, JSON.stringify(opts));
    assert.equal(res.json().code, 'unauthorized');
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
  }
  assert.equal((await pool.query('SELECT count(*) AS n FROM fbl_reports')).rows[0].n, before);
  assert.equal((await suppressionOf(env, msg.to)).suppressed, false);
});

test('fbl: the API key is not the FBL key', async () => {
  const res = await post(fixture('arf-rfc5965-example.eml'), { key: env.acme.liveKey });
  assert.equal(res.statusCode, 401);
});

test('fbl: an unparseable report (a forwarded complaint, not ARF) → 400 invalid_report with the reason, and it is stored', async () => {
  const res = await post(fixture('arf-broken.eml'));
  assert.equal(res.statusCode, 400);
  const problem = res.json();
  assert.equal(problem.code, 'invalid_report');
  assert.match(problem.detail, /not_multipart_report: Content-Type is text\/plain/);
  const [row] = (await pool.query('SELECT * FROM fbl_reports WHERE id = $1', [problem.reportId])).rows;
  assert.equal(row.matched, false);
  assert.match(row.parse_error, /^not_multipart_report/);
  assert.ok(row.raw.toString().includes('I never signed up for this'));
  const empty = await post('');
  assert.equal(empty.statusCode, 400);
  assert.equal(empty.json().code, 'invalid_report');
});

test('fbl: an unmatched report → 202 matched:false and stored in fbl_reports', async () => {
  const res = await post(fixture('arf-rfc5965-example.eml'));
  assert.equal(res.statusCode, 202, res.body);
  assert.deepEqual(res.json(), { matched: false, messageId: null, email: 'user@example.com' });
  const rows = (await pool.query(`SELECT * FROM fbl_reports WHERE email = 'user@example.com' AND NOT matched`)).rows;
  assert.equal(rows.length, 1);
  assert.equal(rows[0].feedback_type, 'abuse');
  assert.equal(rows[0].message_id, null);
  assert.equal(rows[0].account_id, null);
  assert.equal(rows[0].source, 'http');
});

test('fbl: any content type is read as the raw report, including none and JSON-looking ones', async () => {
  for (const contentType of ['application/octet-stream', 'multipart/report; report-type=feedback-report; boundary="x"', 'application/json', 'image/png']) {
    const res = await post(fixture('arf-rfc5965-example.eml'), { contentType });
    assert.equal(res.statusCode, 202, `${contentType}: ${res.body}`);
  }
  const bare = await app.inject({ method: 'POST', url: '/api/fbl/inbound', headers: { 'x-fbl-key': KEY }, payload: fixture('arf-rfc5965-example.eml') });
  assert.equal(bare.statusCode, 202, bare.body);
});

test('fbl: a body over 10 MB → 413 payload_too_large', async () => {
  const res = await post(Buffer.alloc(10 * 1024 * 1024 + 1, 'a'));
  assert.equal(res.statusCode, 413);
  assert.equal(res.json().code, 'payload_too_large');
});

test('fbl: the route is in the OpenAPI document, unversioned, without API-key security, with examples', async () => {
  const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();
  const op = doc.paths['/api/fbl/inbound']?.post;
  assert.ok(op, 'documented');
  // Not the API key: the FBL key, in a header or the query (Redocly's security-defined rule).
  assert.deepEqual(op.security, [{ fblKey: [] }, { fblKeyQuery: [] }]);
  assert.ok(Object.keys(op.requestBody.content).includes('message/rfc822'));
  assert.deepEqual(Object.keys(op.responses).sort(), ['202', '400', '401', '413']);
  assert.ok(JSON.stringify(op.responses['202']).includes('msg_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10'));
  // The key's two places are the security schemes (so not repeated as parameters).
  assert.deepEqual([doc.components.securitySchemes.fblKeyQuery.in, doc.components.securitySchemes.fblKeyQuery.name], ['query', 'key']);
  assert.deepEqual([doc.components.securitySchemes.fblKey.in, doc.components.securitySchemes.fblKey.name], ['header', 'X-FBL-Key']);
});
