import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

/**
 * Idempotent sends whose API process died mid-request (docs/decisions/0029-idempotency-lease.md).
 * A process killed after its message committed but before the key's answer was stored leaves
 * the key's record in flight; the state is made here exactly as such a kill leaves it, from
 * a finished request: answer wiped, lease held by a token nobody renews.
 */
const LEASE_S = 5;
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock, env: { POSTLINE_IDEMPOTENCY_LEASE_SECONDS: String(LEASE_S) } });
const { app, pool, acme } = env;

function post(url: string, key: string, payload: unknown) {
  return app.inject({ method: 'POST', url, headers: { ...acme.live, 'content-type': 'application/json', 'idempotency-key': key }, payload: payload as object });
}

/** The record as a process killed before storing the answer leaves it. */
async function killOwner(key: string): Promise<void> {
  const { rowCount } = await pool.query(
    `UPDATE idempotency_keys SET status_code = NULL, response_body = NULL, content_type = NULL, lease_token = 'dead-process',
            locked_until = $3 WHERE account_id = $1 AND key = $2`,
    [acme.accountId, key, new Date(clock.now().getTime() + LEASE_S * 1000)],
  );
  assert.equal(rowCount, 1);
}

async function messagesTo(to: string): Promise<string[]> {
  const { rows } = await pool.query('SELECT id FROM messages WHERE account_id = $1 AND to_email = $2 ORDER BY id', [acme.accountId, to]);
  return rows.map((r) => r.id);
}

test('idempotent send: the owner died after its message committed; after the lease the retry answers with that message', async () => {
  const body = basicEmail({ to: `lease-1@${RECIPIENT_DOMAIN}` });
  const first = await post('/api/v1/emails', 'send-1', body);
  assert.equal(first.statusCode, 202);
  await killOwner('send-1');

  const during = await post('/api/v1/emails', 'send-1', body);
  assert.equal(during.statusCode, 409);
  assert.equal(during.json().code, 'idempotency_conflict');
  assert.equal(during.headers['retry-after'], String(LEASE_S));

  clock.advance(LEASE_S * 1000); // the lease has run out: the key is taken over
  const retry = await post('/api/v1/emails', 'send-1', body);
  assert.equal(retry.statusCode, 202);
  assert.deepEqual(retry.json(), first.json());
  assert.deepEqual(await messagesTo(`lease-1@${RECIPIENT_DOMAIN}`), [first.json().id]);

  const replay = await post('/api/v1/emails', 'send-1', body); // and from now on it is stored
  assert.equal(replay.headers['idempotent-replayed'], 'true');
  assert.deepEqual(replay.json(), first.json());
});

test('idempotent send: the owner died before its message committed; after the lease the retry sends it once', async () => {
  const body = basicEmail({ to: `lease-2@${RECIPIENT_DOMAIN}` });
  const first = await post('/api/v1/emails', 'send-2', body);
  await killOwner('send-2');
  await pool.query('DELETE FROM events WHERE message_id = $1', [first.json().id]);
  await pool.query('DELETE FROM messages WHERE id = $1', [first.json().id]); // as if it never committed
  clock.advance(LEASE_S * 1000 - 1);
  assert.equal((await post('/api/v1/emails', 'send-2', body)).statusCode, 409); // 1 ms before the lease ends
  clock.advance(1);
  const retry = await post('/api/v1/emails', 'send-2', body);
  assert.equal(retry.statusCode, 202);
  assert.notEqual(retry.json().id, first.json().id);
  assert.deepEqual(await messagesTo(`lease-2@${RECIPIENT_DOMAIN}`), [retry.json().id]);
  assert.equal((await post('/api/v1/emails', 'send-2', body)).json().id, retry.json().id);
});

test('idempotent batch: a retry after the lease answers the committed items with their messages, the refused ones as before', async () => {
  const body = { emails: [basicEmail({ to: `lease-3a@${RECIPIENT_DOMAIN}` }), basicEmail({ to: 'not-an-address' }), basicEmail({ to: `lease-3b@${RECIPIENT_DOMAIN}` })] };
  const first = await post('/api/v1/emails/batch', 'batch-1', body);
  assert.equal(first.statusCode, 200);
  await killOwner('batch-1');
  clock.advance(LEASE_S * 1000);
  const retry = await post('/api/v1/emails/batch', 'batch-1', body);
  assert.equal(retry.statusCode, 200);
  assert.deepEqual(retry.json(), first.json());
  assert.equal((await messagesTo(`lease-3a@${RECIPIENT_DOMAIN}`)).length, 1);
  assert.equal((await messagesTo(`lease-3b@${RECIPIENT_DOMAIN}`)).length, 1);
});

test('idempotent send: a finished record holds no lease; one send per claimed request is enforced by a unique index', async () => {
  const { rows } = await pool.query(`SELECT locked_until FROM idempotency_keys WHERE account_id = $1 AND key = 'send-1'`, [acme.accountId]);
  assert.equal(rows[0].locked_until, null); // a finished record holds no lease
  const { rows: idx } = await pool.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'messages_idempotency_ref'`);
  assert.match(idx[0].indexdef, /UNIQUE INDEX .* \(account_id, idempotency_ref\) WHERE \(idempotency_ref IS NOT NULL\)/);
  await assert.rejects(
    pool.query(`UPDATE messages SET idempotency_ref = 'same' WHERE account_id = $1 AND to_email LIKE 'lease-%'`, [acme.accountId]),
    /messages_idempotency_ref/,
  );
});
