import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimDueMessages } from '../../src/delivery/queue.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

// The worker's refilling claim. A slow MX (each DATA answered after 150 ms) keeps
// deliveries in flight long enough to see the engine claim again before its first claim is done.
const env = await startMailEnv({ mx: { dataDelayMs: 150, starttls: false } });

test('refill: claims up to the batch size, claims again at half without waiting for the rest, and delivers everything once', async () => {
  for (let i = 0; i < 10; i++) assert.equal((await env.send(basicEmail({ to: `r${i}@${RECIPIENT_DOMAIN}` }))).statusCode, 202);
  const engine = env.newEngine({ batchSize: 4, maxConnectionsPerHost: 4 });
  const errors: unknown[] = [];
  const onError = (e: unknown) => void errors.push(e);
  let roomCalls = 0;
  let resolveRoom: () => void = () => {};
  const onRoom = () => {
    roomCalls++;
    resolveRoom();
  };
  const nextRoom = () => new Promise<void>((r) => (resolveRoom = r));
  const inFlight = async () => (await env.pool.query(`SELECT count(*)::int AS n FROM messages WHERE status = 'sending'`)).rows[0].n as number;

  let room = nextRoom();
  assert.equal(await engine.refill(onRoom, onError), 4, 'the first claim fills the batch');
  assert.equal(await engine.refill(onRoom, onError), 0, 'no room: nothing more is claimed');
  assert.equal(await inFlight(), 4);
  await room; // two of the four are done
  assert.ok((await env.pool.query(`SELECT count(*)::int AS n FROM messages WHERE status = 'delivered'`)).rows[0].n >= 2);
  room = nextRoom();
  const second = await engine.refill(onRoom, onError);
  assert.ok(second >= 2 && second <= 4, `claims the free half (got ${second})`);
  // Until nothing is left: each refill tops the batch up.
  let claimed = 4 + second;
  while (claimed < 10) {
    await room;
    room = nextRoom();
    claimed += await engine.refill(onRoom, onError);
  }
  await engine.drain();
  assert.equal(claimed, 10);
  assert.equal(errors.length, 0, String(errors[0]));
  assert.ok(roomCalls >= 2);
  const { rows } = await env.pool.query(`SELECT status, count(*)::int AS n FROM messages GROUP BY status`);
  assert.deepEqual(rows, [{ status: 'delivered', n: 10 }]);
  const got = env.mx.messages.map((m) => m.envelope.to[0]).sort();
  assert.deepEqual(got, Array.from({ length: 10 }, (_, i) => `r${i}@${RECIPIENT_DOMAIN}`).sort(), 'each once');
  assert.equal(await engine.refill(onRoom, onError), 0, 'nothing due');
});

test('refill while campaigns are held: claims only mail of no campaign, at the full batch size, until the hold ends', async () => {
  await env.pool.query('DELETE FROM messages');
  for (let i = 0; i < 12; i++) assert.equal((await env.send(basicEmail({ to: `s${i}@${RECIPIENT_DOMAIN}` }))).statusCode, 202);
  // Four of them stand for a campaign's messages (the claim looks only at campaign_id).
  await env.pool.query(
    `UPDATE messages SET campaign_id = 'cmp_held', subscriber_id = id WHERE id IN (SELECT id FROM messages ORDER BY id LIMIT 4)`,
  );
  const engine = env.newEngine({ batchSize: 8, maxConnectionsPerHost: 8 });
  const errors: unknown[] = [];
  const onError = (e: unknown) => void errors.push(e);
  engine.holdCampaigns(true); // as while the worker's process fans a campaign out
  assert.equal(await engine.refill(() => {}, onError), 8, 'the whole batch, of mail of no campaign');
  await engine.drain();
  assert.equal(await engine.refill(() => {}, onError), 0, 'only campaign mail is left, and it is held');
  assert.equal(errors.length, 0, String(errors[0]));
  const byStatus = async () =>
    (await env.pool.query(`SELECT campaign_id IS NOT NULL AS campaign, status, count(*)::int AS n FROM messages GROUP BY 1, 2 ORDER BY 1`)).rows;
  assert.deepEqual(await byStatus(), [{ campaign: false, status: 'delivered', n: 8 }, { campaign: true, status: 'queued', n: 4 }]);
  engine.holdCampaigns(false);
  const held = await env.pool.query(`SELECT id FROM messages WHERE campaign_id IS NOT NULL`);
  // Claimable again once the hold is over (not delivered here: no such campaign exists).
  const due = await claimDueMessages(env.pool, 'probe', new Date(Date.now() + 1000), 8, 60_000);
  assert.deepEqual(due.map((m) => m.id).sort(), held.rows.map((r) => r.id).sort());
});

test('refill: at most buildsAtOnce messages are built at once, the rest wait their turn and are all delivered', async () => {
  await env.pool.query(`DELETE FROM messages`);
  env.mx.messages.length = 0;
  for (let i = 0; i < 12; i++) assert.equal((await env.send(basicEmail({ to: `b${i}@${RECIPIENT_DOMAIN}` }))).statusCode, 202);
  const engine = env.newEngine({ batchSize: 12, maxConnectionsPerHost: 12, buildsAtOnce: 3 });
  let building = 0;
  let most = 0;
  const build = engine.builder.build.bind(engine.builder);
  engine.builder.build = async (msg, now) => {
    most = Math.max(most, ++building);
    try {
      return await build(msg, now);
    } finally {
      building--;
    }
  };
  const errors: unknown[] = [];
  assert.equal(await engine.refill(() => {}, (e) => void errors.push(e)), 12);
  await engine.drain();
  assert.equal(errors.length, 0, String(errors[0]));
  assert.equal(most, 3, 'never more than three builds under way, and the gate is used in full');
  const { rows } = await env.pool.query(`SELECT status, count(*)::int AS n FROM messages GROUP BY status`);
  assert.deepEqual(rows, [{ status: 'delivered', n: 12 }]);
  assert.equal(env.mx.messages.length, 12);
});
