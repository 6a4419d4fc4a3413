import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createUser } from '../../src/domain/users/users.js';
import { MAX_FAILURES_PER_ADDRESS, MAX_FAILURES_PER_IP } from '../../src/domain/users/throttle.js';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';

const clock = new ManualClock(new Date('2026-11-23T10:00:00.000Z'));
const { app, pool } = await bootApp({ clock });
const acme = await createTestAccount(pool, 'Acme');
const PASSWORD = 'correct horse battery';
await createUser(pool, { accountId: acme.accountId, email: 'Ada@Example.com', password: PASSWORD }, clock.now());

function cookieOf(res: LightMyRequestResponse): string {
  const set = res.headers['set-cookie'];
  const line = (Array.isArray(set) ? set : [set ?? '']).find((c) => c.startsWith('postline_session='));
  assert.ok(line, 'a session cookie is set');
  return line.split(';')[0];
}

async function signIn(email = 'ada@example.com', password = PASSWORD, remoteAddress = '127.0.0.1') {
  return app.inject({ method: 'POST', url: '/api/v1/session', payload: { email, password }, remoteAddress });
}

test('sign-in: sets an HttpOnly SameSite=Strict cookie and returns user, account and CSRF token', async () => {
  const res = await signIn();
  assert.equal(res.statusCode, 200, res.body);
  const set = String(res.headers['set-cookie']);
  assert.match(set, /HttpOnly/);
  assert.match(set, /SameSite=Strict/);
  assert.match(set, /Path=\//);
  assert.doesNotMatch(set, /Secure/, 'plain http base URL: no Secure flag, or the browser would drop it');
  const body = res.json();
  assert.equal(body.user.email, 'Ada@Example.com');
  assert.equal(body.account.id, acme.accountId);
  assert.ok(body.csrfToken.length >= 20);
  assert.ok(!JSON.stringify(body).includes('argon2'), 'no password hash in the answer');
});

test('session: the cookie authenticates /api/v1 reads; GET /api/v1/session returns the same CSRF token', async () => {
  const signed = await signIn();
  const cookie = cookieOf(signed);
  const me = await app.inject({ url: '/api/v1/me', headers: { cookie } });
  assert.equal(me.statusCode, 200);
  assert.equal(me.json().account.id, acme.accountId);
  assert.equal(me.json().key, null);
  assert.equal(me.json().user.email, 'Ada@Example.com');
  const s = await app.inject({ url: '/api/v1/session', headers: { cookie } });
  assert.equal(s.statusCode, 200);
  assert.equal(s.json().csrfToken, signed.json().csrfToken);
  assert.ok(s.headers['ratelimit-limit'], 'sessions count against the account rate limit');
});

test('CSRF: a cookie-authenticated write without the token is refused whatever its Origin; with it, it goes through', async () => {
  const signed = await signIn();
  const cookie = cookieOf(signed);
  const payload = { email: 'x@example.com', reason: 'manual' };
  for (const headers of [{ cookie }, { cookie, origin: 'http://localhost:3000' }, { cookie, origin: 'https://evil.example' }, { cookie, 'x-csrf-token': 'wrong' }]) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/suppression', headers, payload });
    assert.equal(res.statusCode, 403, JSON.stringify(headers));
    assert.equal(res.json().code, 'forbidden');
  }
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM suppressions')).rows[0].n, 0, 'nothing was written');
  const ok = await app.inject({ method: 'POST', url: '/api/v1/keys', headers: { cookie, 'x-csrf-token': signed.json().csrfToken }, payload: { name: 'from the dashboard' } });
  assert.equal(ok.statusCode, 201, ok.body);
});

test('CSRF: a token of another session does not work', async () => {
  const a = await signIn();
  const b = await signIn();
  const res = await app.inject({ method: 'DELETE', url: '/api/v1/session', headers: { cookie: cookieOf(a), 'x-csrf-token': b.json().csrfToken } });
  assert.equal(res.statusCode, 403);
});

test('sign-out: ends the session; the cookie gets 401 afterwards', async () => {
  const signed = await signIn();
  const cookie = cookieOf(signed);
  const out = await app.inject({ method: 'DELETE', url: '/api/v1/session', headers: { cookie, 'x-csrf-token': signed.json().csrfToken } });
  assert.equal(out.statusCode, 204);
  assert.match(String(out.headers['set-cookie']), /postline_session=;/);
  const after = await app.inject({ url: '/api/v1/me', headers: { cookie } });
  assert.equal(after.statusCode, 401);
  assert.equal(after.json().code, 'unauthorized');
});

test('session routes: an API key has no session (403)', async () => {
  const res = await app.inject({ url: '/api/v1/session', headers: acme.live });
  assert.equal(res.statusCode, 403);
  assert.equal(res.json().code, 'forbidden');
});

test('sign-in: wrong password and unknown address answer the same 401', async () => {
  const wrong = await signIn('ada@example.com', 'not the password', '10.1.0.1');
  const unknown = await signIn('nobody@example.com', PASSWORD, '10.1.0.1');
  for (const r of [wrong, unknown]) {
    assert.equal(r.statusCode, 401);
    assert.equal(r.json().detail, 'Wrong email or password');
    assert.equal(r.headers['set-cookie'], undefined);
  }
});

test('throttle: per address, the 11th attempt in the window is refused even with the right password; the window ends', async () => {
  await createUser(pool, { accountId: acme.accountId, email: 'grace@example.com', password: PASSWORD }, clock.now());
  for (let i = 0; i < MAX_FAILURES_PER_ADDRESS; i++) {
    const r = await signIn('grace@example.com', 'wrong password', `10.2.0.${i + 1}`);
    assert.equal(r.statusCode, 401, `attempt ${i + 1}`);
  }
  const blocked = await signIn('grace@example.com', PASSWORD, '10.2.1.1');
  assert.equal(blocked.statusCode, 429);
  assert.equal(blocked.json().code, 'rate_limited');
  assert.ok(Number(blocked.headers['retry-after']) > 0);
  assert.equal((await signIn('GRACE@example.com', PASSWORD, '10.2.1.2')).statusCode, 429, 'the address is matched case-insensitively');
  clock.advance(15 * 60_000);
  assert.equal((await signIn('grace@example.com', PASSWORD, '10.2.1.1')).statusCode, 200);
});

test('throttle: per IP, 50 failures over many addresses block that IP only', async () => {
  for (let i = 0; i < MAX_FAILURES_PER_IP; i++) {
    assert.equal((await signIn(`spray${i}@example.com`, 'guess guess', '10.3.0.9')).statusCode, 401);
  }
  assert.equal((await signIn('ada@example.com', PASSWORD, '10.3.0.9')).statusCode, 429);
  assert.equal((await signIn('ada@example.com', PASSWORD, '10.3.0.10')).statusCode, 200, 'another IP is not affected');
});

test('sign-in: hostile and malformed bodies answer 4xx', async () => {
  const bodies: unknown[] = [
    {}, { email: 'ada@example.com' }, { email: 'a\u0000@example.com', password: PASSWORD }, { email: 'ada@example.com', password: '\ud800' },
    { email: 'x'.repeat(400), password: PASSWORD }, { token: '' }, { token: 'sil_x', email: 'a@b.c' }, [1, 2], 'text',
  ];
  for (const payload of bodies) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/session', payload: payload as object, remoteAddress: '10.4.0.1' });
    assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${JSON.stringify(payload)} → ${res.statusCode}`);
  }
});

test('expired sessions: idle for 7 days, the cookie is refused', async () => {
  const cookie = cookieOf(await signIn());
  clock.advance(7 * 86_400_000 + 1000);
  assert.equal((await app.inject({ url: '/api/v1/me', headers: { cookie } })).statusCode, 401);
});
