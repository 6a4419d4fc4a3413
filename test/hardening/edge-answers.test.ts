import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { runCampaignStep } from '../../src/domain/campaigns/runner.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { api, campaignBody, seedList } from '../campaigns/helpers.js';

/** Answers a new user ran into: overlong ids, empty JSON bodies, the loopback hook refusal, the quota card. */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock, env: { POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'false' } });
const acme = await createTestAccount(pool);
await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
const live = api(app, acme.live);

test('routing: an {id} longer than the router limit is a 404 problem on every route shape, not a 500', async () => {
  const long = 'x'.repeat(5000);
  for (const url of [`/api/v1/lists/${long}`, `/api/v1/subscribers/${long}`, `/api/v1/campaigns/${long}/send`, `/api/v1/templates/${long}`]) {
    const res = await app.inject({ url, headers: acme.live });
    assert.equal(res.statusCode, 404, `${url.slice(0, 30)} → ${res.body}`);
    assert.equal(res.headers['content-type'], 'application/problem+json; charset=utf-8');
    assert.equal(res.json().code, 'not_found');
  }
  // At the limit the route is found and the id's own schema answers.
  const atLimit = await app.inject({ url: `/api/v1/lists/${'x'.repeat(800)}`, headers: acme.live });
  assert.equal(atLimit.statusCode, 422, atLimit.body);
});

test('body-less operations: Content-Type application/json with an empty body is accepted; a body route still refuses it', async () => {
  const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 2, domain: 'example.net' });
  const c = (await live.post('/api/v1/campaigns', campaignBody(listId))).body;
  const send = await app.inject({ method: 'POST', url: `/api/v1/campaigns/${c.id}/send`, headers: { ...acme.live, 'content-type': 'application/json' } });
  assert.equal(send.statusCode < 300, true, send.body);
  const list = await app.inject({ method: 'POST', url: '/api/v1/lists', headers: { ...acme.live, 'content-type': 'application/json' } });
  assert.equal(list.statusCode, 400, list.body);
  assert.equal(list.json().code, 'invalid_json');
});

test('webhooks: refusing a loopback URL names the setting that allows it for development', async () => {
  const res = await live.post('/api/v1/hooks', { url: 'http://127.0.0.1:9/hook', events: ['delivered'] });
  assert.equal(res.status, 422);
  assert.match(res.body.errors[0].message, /127\.0\.0\.1 is not a public address: loopback/);
  assert.match(res.body.errors[0].message, /POSTLINE_WEBHOOK_ALLOW_PRIVATE=true/);
});

test('stats: an account without a quota sees this month\'s use, API and campaign messages alike', async () => {
  const before = (await live.get('/api/v1/stats')).body.quota;
  assert.deepEqual(before, { used: 0, limit: null, resetsAt: '2026-12-01T00:00:00.000Z' });
  const sent = await live.post('/api/v1/emails', { to: 'ada@example.net', from: { email: 'hi@acme.test' }, subject: 'Hi', text: 'x' });
  assert.equal(sent.status, 202, JSON.stringify(sent.body));
  await runCampaignStep({ pool, now: () => clock.now(), quotaOf: async () => null });
  const after = (await live.get('/api/v1/stats')).body.quota;
  assert.equal(after.used, 3, 'one API message and the two campaign messages of the previous test');
  assert.equal(after.limit, null);
});
