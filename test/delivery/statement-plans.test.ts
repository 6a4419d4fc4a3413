import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { planOutcome } from '../../src/delivery/outcome.js';
import { claimDueMessages, recordOutcomes } from '../../src/delivery/queue.js';
import { newId } from '../../src/ids.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

// The worker's two statements per group of messages, the claim and the outcome record, are
// prepared so that a connection plans them a few times and then runs a generic plan
// (docs/decisions/0046-worker-statements-planned-once.md). PostgreSQL keeps planning a prepared
// statement per call when its generic plan looks dearer than the custom ones; the claim did so
// for as long as its locking step joined the chosen ids (docs/decisions/0057-delivery-statements-in-postgres.md).
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { pool } = env;

test('statement plans: after its first calls on a connection, the claim of each stream and the outcome record run their generic plan', async () => {
  const emails = Array.from({ length: 60 }, (_, i) => basicEmail({ to: `plan${i}@${RECIPIENT_DOMAIN}` }));
  for (let i = 0; i < emails.length; i += 20) {
    const res = await env.app.inject({
      method: 'POST', url: '/api/v1/emails/batch', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { emails: emails.slice(i, i + 20) },
    });
    assert.equal(res.statusCode, 200, res.body);
  }
  // A queue of a realistic size: with a few dozen rows any plan is cheap, and the generic one wins whatever its shape.
  await pool.query(
    `INSERT INTO messages (id, account_id, status, from_email, to_email, to_domain, subject, text, next_attempt_at, created_at)
     SELECT 'msg_plan' || lpad(g::text, 8, '0'), $1, 'queued', 'hello@acme.test', 'bulk' || g || '@${RECIPIENT_DOMAIN}', '${RECIPIENT_DOMAIN}',
            'Hi', 'Hello', $2::timestamptz + g * interval '1 ms', $2
       FROM generate_series(1, 5000) g`,
    [env.acme.accountId, clock.now()],
  );
  await pool.query('ANALYZE messages');
  const client = await pool.connect();
  try {
    for (let call = 0; call < 12; call++) {
      const now = new Date(clock.now().getTime() + 10_000);
      // Groups the size they have under load (bench:delivery: ~35 claimed, ~38 recorded at once).
      const rows = await claimDueMessages(client, 'w1', now, 25 + (call % 4) * 5, 60_000, { stream: 'transactional' });
      assert.ok(rows.length > 0);
      await claimDueMessages(client, 'w1', now, 3, 60_000, { stream: 'campaign' });
      await recordOutcomes(client, 'w1', [], rows.map((m) => {
        const p = planOutcome(m, { kind: 'delivered', response: '250 ok', mx: 'mx.example.net' }, now);
        return { outcome: p.outcome, source: null, event: { id: newId('evt'), accountId: p.event.accountId, type: p.event.type, email: p.event.email, data: {}, occurredAt: now } };
      }));
    }
    const { rows } = await client.query(
      `SELECT name, generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE name LIKE 'postline-%' ORDER BY name`,
    );
    assert.deepEqual(rows.map((r) => r.name), ['postline-claim-campaign', 'postline-claim-transactional', 'postline-record-outcomes']);
    for (const r of rows) {
      assert.ok(r.custom_plans <= 5, `${r.name}: ${r.custom_plans} custom plans`);
      assert.ok(r.generic_plans >= 7, `${r.name}: ${r.generic_plans} generic plans`);
    }
  } finally {
    client.release();
  }
});
