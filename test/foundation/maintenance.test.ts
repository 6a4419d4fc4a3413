import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { runMaintenance } from '../../src/workers/maintenance.js';
import { bootApp, createTestAccount } from '../helpers/app.js';

const clock = new ManualClock('2026-11-20T10:00:30.000Z');
const { app, pool } = await bootApp({ clock });
const acme = await createTestAccount(pool);

test('maintenance: purges expired idempotency records, closed rate windows and old webhook attempt logs only', async () => {
  await app.inject({ url: '/api/v1/me', headers: acme.live });
  await pool.query(`INSERT INTO idempotency_keys (account_id, key, request_hash, created_at, expires_at) VALUES ($1, 'old', '\\x00', $2, $3), ($1, 'fresh', '\\x00', $2, $4)`,
    [acme.accountId, clock.now(), new Date(clock.now().getTime() - 1), new Date(clock.now().getTime() + 3600_000)]);
  await pool.query(`INSERT INTO hooks (id, account_id, url, events, secret, next_attempt_at, created_at) VALUES ('hook_00000000000000000000000000000001', $1, 'https://example.com/h', ARRAY['open'], 'x', $2, $2)`, [acme.accountId, clock.now()]);
  const hook = { id: 'hook_00000000000000000000000000000001' };
  {
    await pool.query(`INSERT INTO hook_deliveries (id, hook_id, attempted_at, attempt, outcome, duration_ms, event_count) VALUES
      ('dlv_old', $1, $2, 1, 'delivered', 5, 1), ('dlv_new', $1, $3, 1, 'delivered', 5, 1)`,
      [hook.id, new Date(clock.now().getTime() - 31 * 86_400_000), new Date(clock.now().getTime() - 29 * 86_400_000)]);
  }
  clock.advance(60_000); // the window of the /me request is now closed
  const result = await runMaintenance(pool, clock);
  assert.equal(result.idempotency, 1);
  assert.equal(result.rateWindows, 1);
  const keys = (await pool.query('SELECT key FROM idempotency_keys')).rows.map((r) => r.key);
  assert.deepEqual(keys, ['fresh']);
  {
    assert.equal(result.hookDeliveries, 1);
    assert.deepEqual((await pool.query('SELECT id FROM hook_deliveries')).rows.map((r) => r.id), ['dlv_new']);
  }
});
