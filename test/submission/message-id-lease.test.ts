import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SendPipeline } from '../../src/domain/sending/send-pipeline.js';
import { claimMessageId } from '../../src/submission/message-id-dedup.js';
import { ManualClock } from '../../src/clock.js';
import { basicEmail, startMailEnv } from '../helpers/mail-env.js';

const clock = new ManualClock('2026-11-30T10:00:00.000Z');
const env = await startMailEnv({ clock });
const sender = { accountId: env.acme.accountId, mode: 'live' as const, monthlyQuota: null };
const pipeline = new SendPipeline({ pool: env.pool, config: env.config, clock });

test('message-id: a claim left by a process that died after storing is taken over once its lease ends, and answered with the stored message', async () => {
  const messageId = '<died@app.acme.test>';
  const first = await claimMessageId(env.pool, { ...sender, messageId, now: clock.now(), leaseMs: 30_000 });
  assert.equal(first.state, 'new');
  if (first.state !== 'new') return;
  const stored = await pipeline.send(sender, basicEmail({ subject: 'Once only' }), first.claim);
  // The process dies here: no completion. While the lease holds, a retry is told to come back.
  assert.equal((await claimMessageId(env.pool, { ...sender, messageId, now: clock.now(), leaseMs: 30_000 })).state, 'in_flight');
  clock.advance(31_000);
  const retry = await claimMessageId(env.pool, { ...sender, messageId, now: clock.now(), leaseMs: 30_000 });
  assert.ok(retry.state === 'new' && retry.claim.takenOver);
  const answered = await pipeline.send(sender, basicEmail({ subject: 'Once only' }), retry.claim);
  assert.equal(answered.id, stored.id);
  const { rows } = await env.pool.query(`SELECT count(*)::int AS n FROM messages WHERE account_id = $1 AND subject = 'Once only'`, [env.acme.accountId]);
  assert.equal(rows[0].n, 1);
});
