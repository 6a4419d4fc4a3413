import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool } = await bootApp({ clock });
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

const add = (payload: Record<string, unknown>) => app.inject({ method: 'POST', url: '/api/v1/suppression', headers: json, payload });
const check = (email: string) => app.inject({ url: `/api/v1/suppression?email=${encodeURIComponent(email)}`, headers: acme.live });
const remove = (email: string) => app.inject({ method: 'DELETE', url: `/api/v1/suppression?email=${encodeURIComponent(email)}`, headers: acme.live });

test('GET /suppression?email: an address not on the list is 200 suppressed:false with nulls', async () => {
  const res = await check('nobody@example.com');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { email: 'nobody@example.com', suppressed: false, reason: null, createdAt: null });
});

test('POST /suppression: 201 with the entry; reason defaults to manual', async () => {
  const res = await add({ email: 'Jane.Doe@Example.com' });
  assert.equal(res.statusCode, 201);
  const e = res.json();
  assert.match(e.id, /^sup_[0-9a-f]{32}$/);
  assert.deepEqual({ ...e, id: undefined }, { id: undefined, email: 'Jane.Doe@Example.com', reason: 'manual', detail: null, bounceReason: null, createdAt: '2026-11-20T10:00:00.000Z' });
});

test('GET /suppression?email: a suppressed address is found in any letter case', async () => {
  await add({ email: 'case@Example.org', reason: 'complaint' });
  for (const email of ['case@example.org', 'CASE@EXAMPLE.ORG', ' Case@example.ORG ']) {
    const res = await check(email);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { email: email.trim(), suppressed: true, reason: 'complaint', createdAt: '2026-11-20T10:00:00.000Z' });
  }
});

test('POST /suppression: an address already suppressed (any case) is 200 with the existing entry, unchanged', async () => {
  const first = (await add({ email: 'twice@example.com', reason: 'unsubscribe' })).json();
  clock.advance(5_000);
  const again = await add({ email: 'TWICE@example.com', reason: 'manual' });
  assert.equal(again.statusCode, 200);
  assert.deepEqual(again.json(), first);
  const n = await pool.query('SELECT count(*)::int AS n FROM suppressions WHERE account_id = $1 AND email_key = $2', [acme.accountId, 'twice@example.com']);
  assert.equal(n.rows[0].n, 1);
});

test('POST /suppression: every documented reason is accepted, another is 422', async () => {
  for (const reason of ['manual', 'unsubscribe', 'hard_bounce', 'complaint', 'import']) {
    const res = await add({ email: `${reason}@reasons.example`, reason });
    assert.equal(res.statusCode, 201, reason);
    assert.equal(res.json().reason, reason);
  }
  const bad = await add({ email: 'x@reasons.example', reason: 'spam' });
  assert.equal(bad.statusCode, 422);
  assert.equal(bad.json().code, 'validation_failed');
  assert.equal(bad.json().errors[0].field, 'reason');
});

test('POST /suppression: an invalid address is 422 validation_failed on email', async () => {
  for (const email of ['not-an-address', 'a@b', 'two@@example.com', 'Jane <jane@example.com>', 'a@-bad.example', 'a@[127.0.0.1]', '', 'x'.repeat(65) + '@example.com', 'a, b@example.com']) {
    const res = await add({ email });
    assert.equal(res.statusCode, 422, email);
    assert.equal(res.json().code, 'validation_failed');
    assert.match(res.json().errors[0].field, /email$/);
  }
});

test('POST /suppression: neither email nor entries, both, or an unknown field is 422', async () => {
  for (const payload of [{}, { reason: 'manual' }, { email: 'a@example.com', entries: [{ email: 'b@example.com' }] }, { email: 'a@example.com', why: 'x' }]) {
    const res = await add(payload);
    assert.equal(res.statusCode, 422, JSON.stringify(payload));
    assert.equal(res.json().code, 'validation_failed');
  }
});

test('GET /suppression?email: an invalid address is 422', async () => {
  const res = await check('nope');
  assert.equal(res.statusCode, 422);
  assert.equal(res.json().code, 'validation_failed');
});

test('DELETE /suppression?email: re-subscribes (200 {email, suppressed:false}); the check then says not suppressed', async () => {
  await add({ email: 'back@example.com', reason: 'unsubscribe' });
  const res = await remove('BACK@example.com');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { email: 'BACK@example.com', suppressed: false });
  assert.equal((await check('back@example.com')).json().suppressed, false);
});

test('DELETE /suppression?email: an address that is not suppressed is 404 not_found', async () => {
  const res = await remove('never@example.com');
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().code, 'not_found');
  assert.equal((await remove('back2@example.com')).statusCode, 404);
});

test('DELETE /suppression: missing or invalid email is 422', async () => {
  assert.equal((await app.inject({ method: 'DELETE', url: '/api/v1/suppression', headers: acme.live })).statusCode, 422);
  assert.equal((await remove('nope')).statusCode, 422);
});

test('POST /suppression after a re-subscribe adds the address again (201, new entry)', async () => {
  const first = (await add({ email: 'again@example.com' })).json();
  await remove('again@example.com');
  const res = await add({ email: 'again@example.com', reason: 'hard_bounce' });
  assert.equal(res.statusCode, 201);
  assert.notEqual(res.json().id, first.id);
  assert.equal(res.json().reason, 'hard_bounce');
});

test('POST /suppression: an Idempotency-Key replays the first response', async () => {
  const headers = { ...json, 'idempotency-key': 'sup-1' };
  const a = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers, payload: { email: 'idem@example.com' } });
  const b = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers, payload: { email: 'idem@example.com' } });
  assert.equal(a.statusCode, 201);
  assert.equal(b.statusCode, 201);
  assert.equal(b.headers['idempotent-replayed'], 'true');
  assert.deepEqual(b.json(), a.json());
});
