import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { DeliveryEngine, DEFAULT_DELIVERY_OPTIONS } from '../../src/delivery/engine.js';
import { CampaignRenderer } from '../../src/domain/campaigns/content.js';

import { basicEmail, startMailEnv } from '../helpers/mail-env.js';
import { startZoo } from '../helpers/receiver-zoo.js';

/**
 * Two delivery engines (two workers, each with its own lease holder id and EHLO name) and one
 * destination of two connections. The first worker takes both while it is alone; when the
 * second gets mail for it, a share moves over within a few heartbeats (not at the first
 * worker's next lease renewal, twice over), and the receiver never sees a third connection.
 */
const MESSAGES = 150;
const zoo = await startZoo({ pair: { maxConnections: 2, delayMs: 40 } });
after(() => zoo.close());
const dir = mkdtempSync(join(tmpdir(), 'postline-handover-'));
const policyPath = join(dir, 'policy.json');
writeFileSync(policyPath, JSON.stringify({ providers: [{ name: 'pair', mx: ['*.pair.zoo.test'], maxConnections: 2, messagesPerConnection: 1000 }] }));
const env = await startMailEnv({ env: { POSTLINE_MX_PORT: String(zoo.port), POSTLINE_DELIVERY_POLICY: policyPath } });
env.dns.setRecords('pair.example', 'MX', [{ exchange: 'mx1.pair.zoo.test', priority: 10 }]);
env.dns.setRecords('mx1.pair.zoo.test', 'A', [zoo.mx.pair.address]);

/** The worker loop's shape (src/workers/index.ts): refill, and again when room is announced or after a short pause. */
function drive(engine: DeliveryEngine, errors: unknown[]) {
  let stopped = false;
  let wake = () => {};
  const loop = (async () => {
    while (!stopped) {
      if ((await engine.refill(() => wake(), (e) => errors.push(e))) > 0) continue;
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 50);
      });
    }
  })();
  return async () => {
    stopped = true;
    wake();
    await loop;
    await engine.drain();
  };
}

test('shaping handover: a worker holding all of a destination\'s slots gives a share to another worker within a few heartbeats, never exceeding maxConnections', { timeout: 60_000 }, async () => {
  const emails = Array.from({ length: MESSAGES }, (_, i) => basicEmail({ to: `r${i}@pair.example` }));
  for (let i = 0; i < emails.length; i += 100) {
    const res = await env.app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: { ...env.acme.live, 'content-type': 'application/json' }, payload: { emails: emails.slice(i, i + 100) } });
    assert.equal(res.statusCode, 200);
  }
  const errors: unknown[] = [];
  // Two messages in flight per worker: the holder never has a message waiting for a slot, so
  // nothing but its shaping heartbeat can tell it that another worker waits.
  const opts = { ...DEFAULT_DELIVERY_OPTIONS, batchSize: 2 };
  const a = env.newEngine(opts);
  const b = new DeliveryEngine(
    { pool: env.pool, config: { ...env.config, baseUrl: 'https://b.postline.test' }, clock: env.clock, log: pino({ level: 'silent' }), content: (links) => new CampaignRenderer(env.pool, links) },
    opts,
  );

  // The slots held in the database, summed over workers, sampled all along.
  let heldPeak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const { rows } = await env.pool.query(`SELECT coalesce(sum(connections), 0)::int AS n FROM delivery_leases WHERE destination = 'pair' AND expires_at > now()`);
      heldPeak = Math.max(heldPeak, rows[0].n);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  const until = async (what: string, ok: () => boolean, ms = 20_000) => {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const accepted = zoo.mx.pair.accepted;
  const stopA = drive(a, errors);
  let stopB = async () => {};
  try {
  await until('the first worker to hold both connections', () => zoo.mx.pair.open === 2 && accepted.length >= 6);
  assert.ok(accepted.every((m) => m.helo === 'postline.test'));

  const beatsBefore = a.shaping.beats;
  const startedAt = Date.now();
  stopB = drive(b, errors);
  await until('the second worker\'s first delivery', () => accepted.some((m) => m.helo === 'b.postline.test'));
  const beats = a.shaping.beats - beatsBefore;
  const tookMs = Date.now() - startedAt;
  process.stdout.write(`# handover: the second worker's first delivery ${tookMs} ms after it started, ${beats} heartbeats of the first\n`);
  // Its first lease call finds both held; the holder's next heartbeat sees it waiting, shrinks
  // its grant and closes one connection once its message is done; the close is reported after
  // the grace period (a beat), and the waiting worker's next ask gets the slot: three or four
  // beats. Before, the holder heard of the waiting worker only at its next lease renewal
  // (every 8 beats' worth of time) and reported the closed connection at a later call.
  assert.ok(beats <= 6, `the second worker waited ${beats} heartbeats (${tookMs} ms) for a connection slot`);

  await until('every message delivered', () => accepted.length >= MESSAGES, 45_000);
  } finally {
    await Promise.all([stopA(), stopB()]);
    sampling = false;
    await sampler;
    await Promise.all([a.close(), b.close()]);
  }

  assert.deepEqual(errors, []);
  assert.equal(new Set(accepted.map((m) => m.to)).size, MESSAGES, 'each once');
  assert.equal(accepted.length, MESSAGES);
  assert.ok(zoo.mx.pair.maxOpen <= 2, `the receiver saw ${zoo.mx.pair.maxOpen} connections at once`);
  assert.deepEqual(zoo.mx.pair.refusals, [], 'no connection refused');
  assert.ok(heldPeak <= 2, `${heldPeak} slots held at once`);
  const byB = accepted.filter((m) => m.helo === 'b.postline.test').length;
  assert.ok(byB >= 5 && byB <= MESSAGES - 5, `the second worker delivered ${byB} of ${MESSAGES}`);
});
