import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { api, campaignBody, seedList } from './helpers.js';

/** A strict campaign refuses to send a placeholder that renders empty for its audience (docs/campaigns.md, "Strict campaigns"). */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool, 'Acme');
await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
const live = api(app, acme.live);
const sandbox = api(app, acme.test);
const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 3, domain: 'example.net' });
// The one subscriber of the audience with the attribute `vip`: the boundary of "no subscriber has it".
const vip = await live.post('/api/v1/subscribers', { email: 'vip@example.net', attributes: { vip: 'gold' }, lists: [listId] });
assert.equal(vip.status, 201, JSON.stringify(vip.body));

async function draft(over: Record<string, unknown> = {}) {
  const r = await live.post('/api/v1/campaigns', campaignBody(listId, over));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}
const messagesOf = async (id: string) => (await pool.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [id])).rows[0].n;
const fields = (errors: { field: string }[]) => errors.map((e) => e.field);

test('strict: false by default, stored, shown on GET and changed by PATCH; not a boolean is refused', async () => {
  const c = await draft();
  assert.equal(c.strict, false);
  const on = await draft({ strict: true });
  assert.equal(on.strict, true);
  assert.equal((await live.get(`/api/v1/campaigns/${on.id}`)).body.strict, true);
  const list = await live.get('/api/v1/campaigns');
  assert.equal(list.body.data.find((x: { id: string }) => x.id === on.id).strict, true);
  // A PATCH that does not name strict keeps it; one that does changes it.
  assert.equal((await live.patch(`/api/v1/campaigns/${on.id}`, { name: 'Renamed' })).body.strict, true);
  assert.equal((await live.patch(`/api/v1/campaigns/${on.id}`, { strict: false })).body.strict, false);
  assert.equal((await live.get(`/api/v1/campaigns/${on.id}`)).body.strict, false);
  const bad = await live.post('/api/v1/campaigns', campaignBody(listId, { strict: 'yes' }));
  assert.ok(bad.status === 400 || bad.status === 422, JSON.stringify(bad.body));
  assert.notEqual(bad.body.code, undefined);
});

test('strict send: 422 template_error naming each placeholder that renders empty for the audience; nothing queued, still a draft', async () => {
  const c = await draft({
    strict: true,
    subject: 'News for {{ subscriber.nmae }}',
    html: '<p>{{ subscriber.attributes.shoe_size }} {{ coupon }} {{ greeting }}</p>',
  });
  assert.deepEqual(fields(c.warnings).sort(), ['coupon', 'subscriber.attributes.shoe_size', 'subscriber.nmae']);
  const res = await live.post(`/api/v1/campaigns/${c.id}/send`);
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.code, 'template_error');
  assert.deepEqual(fields(res.body.errors).sort(), ['coupon', 'subscriber.attributes.shoe_size', 'subscriber.nmae']);
  assert.match(res.body.detail, /\{\{ subscriber\.nmae \}\}, \{\{ subscriber\.attributes\.shoe_size \}\}, \{\{ coupon \}\} have no value and no fallback/);
  assert.match(res.body.errors.find((e: { field: string }) => e.field === 'subscriber.attributes.shoe_size').message, /no subscriber of the audience has the attribute "shoe_size"/);
  const after = await live.get(`/api/v1/campaigns/${c.id}`);
  assert.equal(after.body.status, 'draft');
  assert.equal(await messagesOf(c.id), 0);

  // The test key validates the same, and changes nothing.
  const sbx = await sandbox.post(`/api/v1/campaigns/${c.id}/send`);
  assert.equal(sbx.status, 422);
  assert.equal(sbx.body.code, 'template_error');
  assert.deepEqual(fields(sbx.body.errors).sort(), fields(res.body.errors).sort());
});

test('strict send at the boundary: a fallback passes, an attribute one subscriber has passes, and the send goes out', async () => {
  const c = await draft({
    strict: true,
    subject: 'News for {{ subscriber.nmae | you }}',
    html: '<p>{{ subscriber.attributes.vip }} {{ subscriber.attributes.shoe_size | 42 }} {{ coupon | none }} {{ greeting }}</p>',
  });
  // Warnings still name what gets a fallback; only the strict send's check lets them pass.
  assert.deepEqual(fields(c.warnings).sort(), ['subscriber.attributes.shoe_size', 'subscriber.nmae']);
  const sbx = await sandbox.post(`/api/v1/campaigns/${c.id}/send`);
  assert.deepEqual([sbx.status, sbx.body], [202, { id: c.id, status: 'sending', sandbox: true }]);
  assert.equal((await live.get(`/api/v1/campaigns/${c.id}`)).body.status, 'draft');
  const res = await live.post(`/api/v1/campaigns/${c.id}/send`);
  assert.deepEqual([res.status, res.body], [202, { id: c.id, status: 'sending' }]);
});

test('strict send: one placeholder past the boundary (the attribute no subscriber has, with no fallback) is refused alone', async () => {
  const c = await draft({ strict: true, html: '<p>{{ subscriber.attributes.vip }} {{ subscriber.attributes.vipp }} {{ greeting }}</p>' });
  const res = await live.post(`/api/v1/campaigns/${c.id}/send`);
  assert.equal(res.status, 422);
  assert.deepEqual(fields(res.body.errors), ['subscriber.attributes.vipp']);
  assert.match(res.body.detail, /\{\{ subscriber\.attributes\.vipp \}\} has no value and no fallback for the audience \(strict campaign\)/);
});

test('strict scheduled send: refused the same; without strict the same content is scheduled with warnings only', async () => {
  const scheduledAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
  const body = { scheduledAt, html: '<p>{{ coupon }}</p>' };
  const strict = await draft({ ...body, strict: true });
  const refused = await live.post(`/api/v1/campaigns/${strict.id}/send`);
  assert.deepEqual([refused.status, refused.body.code, fields(refused.body.errors)], [422, 'template_error', ['coupon']]);
  const lax = await draft(body);
  assert.deepEqual(fields(lax.warnings), ['coupon']);
  const scheduled = await live.post(`/api/v1/campaigns/${lax.id}/send`);
  assert.deepEqual([scheduled.status, scheduled.body], [202, { id: lax.id, status: 'scheduled' }]);
  // Turning strict off lets the refused one through too.
  await live.patch(`/api/v1/campaigns/${strict.id}`, { strict: false });
  assert.equal((await live.post(`/api/v1/campaigns/${strict.id}/send`)).body.status, 'scheduled');
});
