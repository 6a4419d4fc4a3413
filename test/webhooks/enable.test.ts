import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount, ManualClock } from '../helpers/app.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { runCli } from '../helpers/cli.js';
import { recordEvents } from '../../src/domain/events.js';
import { dispatchOnce } from '../../src/workers/webhooks.js';

/** A disabled hook can be re-enabled (API and CLI). */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config, dbUrl } = await bootApp({ clock });
const deps = { config, pool, clock };
const acct = await createTestAccount(pool);
const json = { ...acct.live, 'content-type': 'application/json' };

async function record(n: number, from: number): Promise<void> {
  await recordEvents(pool, Array.from({ length: n }, (_, i) => ({
    accountId: acct.accountId, messageId: `msg_${String(from + i).padStart(32, '0')}`, type: 'delivered' as const, email: `r${from + i}@example.com`,
    data: { n: from + i }, occurredAt: new Date(clock.now().getTime() + i),
  })));
}

async function disabledHook() {
  const receiver = await startWebhookReceiver();
  after(() => receiver.close());
  const hook = (await app.inject({ method: 'POST', url: '/api/v1/hooks', headers: json, payload: { url: receiver.url, events: ['delivered'] } })).json();
  receiver.enqueue({ status: 410 });
  await record(2, 0);
  while ((await dispatchOnce(deps)).length > 0);
  assert.equal((await app.inject({ url: `/api/v1/hooks/${hook.id}`, headers: acct.live })).json().status, 'disabled');
  return { hook, receiver };
}

test('hooks: POST /hooks/{id}/enable re-activates a hook disabled by a 410; its pending batch is delivered first, then new events', async () => {
  const { hook, receiver } = await disabledHook();
  await record(1, 10); // recorded while disabled: never queued for it
  const res = await app.inject({ method: 'POST', url: `/api/v1/hooks/${hook.id}/enable`, headers: acct.live });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual([res.json().status, res.json().disabledReason], ['active', null]);
  await record(1, 20);
  while ((await dispatchOnce(deps)).length > 0);
  const delivered = receiver.deliveredEvents().map((e) => e.data.n);
  assert.deepEqual(delivered, [0, 1, 20]);
  const again = await app.inject({ method: 'POST', url: `/api/v1/hooks/${hook.id}/enable`, headers: acct.live });
  assert.equal(again.json().status, 'active', 'enabling an active hook changes nothing');
});

test('hooks: enable with a test key answers sandbox: true and leaves the hook disabled; unknown or foreign hooks are 404', async () => {
  const { hook } = await disabledHook();
  const res = await app.inject({ method: 'POST', url: `/api/v1/hooks/${hook.id}/enable`, headers: acct.test });
  assert.equal(res.statusCode, 200);
  assert.deepEqual([res.json().status, res.json().sandbox], ['active', true]);
  assert.equal((await app.inject({ url: `/api/v1/hooks/${hook.id}`, headers: acct.live })).json().status, 'disabled');
  const other = await createTestAccount(pool, 'Other');
  assert.equal((await app.inject({ method: 'POST', url: `/api/v1/hooks/${hook.id}/enable`, headers: other.live })).statusCode, 404);
  assert.equal((await app.inject({ method: 'POST', url: '/api/v1/hooks/hook_00000000000000000000000000000000/enable', headers: acct.live })).statusCode, 404);
});

test('cli: postline hooks enable HOOK_ID re-enables a disabled hook', async () => {
  const { hook } = await disabledHook();
  const r = await runCli(['hooks', 'enable', hook.id, '--json'], { DATABASE_URL: dbUrl, POSTLINE_SECRET: config.secret, POSTLINE_DATA_DIR: config.dataDir });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).status, 'active');
  assert.equal((await app.inject({ url: `/api/v1/hooks/${hook.id}`, headers: acct.live })).json().status, 'active');
  const missing = await runCli(['hooks', 'enable', 'hook_00000000000000000000000000000000'], { DATABASE_URL: dbUrl, POSTLINE_SECRET: config.secret, POSTLINE_DATA_DIR: config.dataDir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /not found/);
});
