import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId } from '../../src/ids.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { allPages, client, makeList, makeSubscriber, type Json } from './helpers.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const api = client(app, acme.live);

// Five subscribers with known fields, lists and engagement.
const L1 = await makeList(app, acme.live, { name: 'L1' });
const L2 = await makeList(app, acme.live, { name: 'L2' });
const ann = await makeSubscriber(app, acme.live, {
  email: 'ann@alpha.example', name: 'Ann Archer', lists: [L1],
  attributes: { plan: 'pro', seats: 10, vip: true, renews: '2027-01-15', address: { country: 'NO' } },
});
const bob = await makeSubscriber(app, acme.live, { email: 'bob@beta.example', name: 'Bob', lists: [L1, L2], attributes: { plan: 'free', seats: 1, vip: false, renews: '2026-06-01' } });
const cat = await makeSubscriber(app, acme.live, { email: 'cat@alpha.example', lists: [L2], status: 'unsubscribed', attributes: { plan: 'team', seats: '25', renews: 'not a date' } });
const dan = await makeSubscriber(app, acme.live, { email: 'dan@delta.example', name: 'Dan' });
await api.post('/api/v1/suppression', { email: 'eve@beta.example', reason: 'hard_bounce' });
const eve = await makeSubscriber(app, acme.live, { email: 'eve@beta.example', name: 'Eve Archer', attributes: { seats: 5.5 } });
const names = new Map([[ann.id, 'ann'], [bob.id, 'bob'], [cat.id, 'cat'], [dan.id, 'dan'], [eve.id, 'eve']]);
await pool.query(`UPDATE subscribers SET created_at = now() - interval '10 days' WHERE id = $1`, [dan.id]);

const DAY = 86_400_000;
async function event(accountId: string, email: string, type: string, daysAgo: number): Promise<void> {
  await pool.query('INSERT INTO events (id, account_id, type, email, occurred_at) VALUES ($1, $2, $3, $4, $5)', [newId('evt'), accountId, type, email, new Date(Date.now() - daysAgo * DAY)]);
}
await event(acme.accountId, 'ANN@alpha.example', 'open', 2);
await event(acme.accountId, 'ann@alpha.example', 'click', 1);
await event(acme.accountId, 'bob@beta.example', 'open', 40);
await event(acme.accountId, 'cat@alpha.example', 'delivered', 10);
await event(acme.accountId, 'dan@delta.example', 'delivered', 100);
const other = await createTestAccount(pool, 'Other');
await event(other.accountId, 'dan@delta.example', 'open', 1);

/** Creates a segment and returns who is in it (names, sorted), checking the count agrees. */
async function members(conditions: unknown[], match: 'all' | 'any' = 'all'): Promise<string[]> {
  const res = await api.post('/api/v1/segments', { name: 'S', match, conditions });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const list = await allPages(app, acme.live, `/api/v1/segments/${res.body.id}/subscribers?limit=2`);
  assert.equal(res.body.subscriberCount, list.length, 'count agrees with members');
  return list.map((s: Json) => names.get(s.id)!).sort();
}
const one = (field: string, op: string, value?: unknown) => members([value === undefined ? { field, op } : { field, op, value }]);

async function refused(conditions: unknown[]): Promise<Json> {
  const res = await api.post('/api/v1/segments', { name: 'Bad', conditions });
  assert.equal(res.status, 422, JSON.stringify(res.body));
  assert.equal(res.body.code, 'validation_failed');
  return res.body;
}

test('segments: email ops eq, neq, contains, starts_with, in (case-insensitive)', async () => {
  assert.deepEqual(await one('email', 'eq', 'ANN@Alpha.example'), ['ann']);
  assert.deepEqual(await one('email', 'neq', 'ann@alpha.example'), ['bob', 'cat', 'dan', 'eve']);
  assert.deepEqual(await one('email', 'contains', 'BETA'), ['bob', 'eve']);
  assert.deepEqual(await one('email', 'starts_with', 'Ca'), ['cat']);
  assert.deepEqual(await one('email', 'in', ['ann@alpha.example', 'DAN@delta.example']), ['ann', 'dan']);
});

test('segments: name ops including exists and not_exists', async () => {
  assert.deepEqual(await one('name', 'eq', 'Bob'), ['bob']);
  assert.deepEqual(await one('name', 'neq', 'Bob'), ['ann', 'cat', 'dan', 'eve']);
  assert.deepEqual(await one('name', 'contains', 'archer'), ['ann', 'eve']);
  assert.deepEqual(await one('name', 'starts_with', 'da'), ['dan']);
  assert.deepEqual(await one('name', 'in', ['Bob', 'Dan']), ['bob', 'dan']);
  assert.deepEqual(await one('name', 'exists'), ['ann', 'bob', 'dan', 'eve']);
  assert.deepEqual(await one('name', 'not_exists'), ['cat']);
});

test('segments: status eq, neq, in (a hard-bounced address counts as bounced)', async () => {
  assert.deepEqual(await one('status', 'eq', 'active'), ['ann', 'bob', 'dan']);
  assert.deepEqual(await one('status', 'neq', 'active'), ['cat', 'eve']);
  assert.deepEqual(await one('status', 'in', ['unsubscribed', 'bounced']), ['cat', 'eve']);
});

test('segments: createdAt compares dates and within / not_within days', async () => {
  const fiveDaysAgo = new Date(Date.now() - 5 * DAY).toISOString();
  assert.deepEqual(await one('createdAt', 'gt', fiveDaysAgo), ['ann', 'bob', 'cat', 'eve']);
  assert.deepEqual(await one('createdAt', 'gte', fiveDaysAgo), ['ann', 'bob', 'cat', 'eve']);
  assert.deepEqual(await one('createdAt', 'lt', fiveDaysAgo), ['dan']);
  assert.deepEqual(await one('createdAt', 'lte', fiveDaysAgo.slice(0, 10)), ['dan']);
  assert.deepEqual(await one('createdAt', 'within', 7), ['ann', 'bob', 'cat', 'eve']);
  assert.deepEqual(await one('createdAt', 'not_within', 7), ['dan']);
});

test('segments: list membership eq, neq, in, exists, not_exists', async () => {
  assert.deepEqual(await one('list', 'eq', L1), ['ann', 'bob']);
  assert.deepEqual(await one('list', 'neq', L1), ['cat', 'dan', 'eve']);
  assert.deepEqual(await one('list', 'in', [L1, L2]), ['ann', 'bob', 'cat']);
  assert.deepEqual(await one('list', 'exists'), ['ann', 'bob', 'cat']);
  assert.deepEqual(await one('list', 'not_exists'), ['dan', 'eve']);
});

test('segments: string attributes eq, neq, contains, starts_with, in, exists, not_exists', async () => {
  assert.deepEqual(await one('attributes.plan', 'eq', 'pro'), ['ann']);
  assert.deepEqual(await one('attributes.plan', 'neq', 'pro'), ['bob', 'cat', 'dan', 'eve'], 'a missing attribute is not equal');
  assert.deepEqual(await one('attributes.plan', 'contains', 'EA'), ['cat']);
  assert.deepEqual(await one('attributes.plan', 'starts_with', 'fr'), ['bob']);
  assert.deepEqual(await one('attributes.plan', 'in', ['pro', 'team']), ['ann', 'cat']);
  assert.deepEqual(await one('attributes.plan', 'exists'), ['ann', 'bob', 'cat']);
  assert.deepEqual(await one('attributes.plan', 'not_exists'), ['dan', 'eve']);
  assert.deepEqual(await one('attributes.address.country', 'eq', 'NO'), ['ann'], 'dotted path');
});

test('segments: number attributes compare numerically, numeric strings included', async () => {
  assert.deepEqual(await one('attributes.seats', 'gt', 5), ['ann', 'cat', 'eve']);
  assert.deepEqual(await one('attributes.seats', 'gte', 10), ['ann', 'cat']);
  assert.deepEqual(await one('attributes.seats', 'lt', 5.5), ['bob']);
  assert.deepEqual(await one('attributes.seats', 'lte', 5.5), ['bob', 'eve']);
  assert.deepEqual(await one('attributes.seats', 'eq', 10), ['ann']);
  assert.deepEqual(await one('attributes.seats', 'neq', 10), ['bob', 'cat', 'dan', 'eve']);
  assert.deepEqual(await one('attributes.seats', 'in', [1, 25]), ['bob', 'cat']);
});

test('segments: boolean attributes eq and neq', async () => {
  assert.deepEqual(await one('attributes.vip', 'eq', true), ['ann']);
  assert.deepEqual(await one('attributes.vip', 'eq', false), ['bob']);
  assert.deepEqual(await one('attributes.vip', 'neq', true), ['bob', 'cat', 'dan', 'eve']);
});

test('segments: date attributes compare as dates and ignore values that are not dates', async () => {
  assert.deepEqual(await one('attributes.renews', 'gt', '2026-12-31'), ['ann']);
  assert.deepEqual(await one('attributes.renews', 'lt', '2026-12-31T00:00:00Z'), ['bob']);
  assert.deepEqual(await one('attributes.renews', 'gte', '2026-06-01'), ['ann', 'bob']);
  assert.deepEqual(await one('attributes.renews', 'lte', '2026-06-01'), ['bob']);
});

test('segments: engagement opened / clicked / received within, not_within, exists, not_exists', async () => {
  assert.deepEqual(await one('opened', 'within', 7), ['ann']);
  assert.deepEqual(await one('opened', 'within', 60), ['ann', 'bob']);
  assert.deepEqual(await one('opened', 'not_within', 7), ['bob', 'cat', 'dan', 'eve'], "another account's event does not count");
  assert.deepEqual(await one('opened', 'exists'), ['ann', 'bob']);
  assert.deepEqual(await one('opened', 'not_exists'), ['cat', 'dan', 'eve']);
  assert.deepEqual(await one('clicked', 'within', 3), ['ann']);
  assert.deepEqual(await one('received', 'within', 30), ['cat']);
  assert.deepEqual(await one('received', 'exists'), ['cat', 'dan']);
});

test('segments: nested groups combine all and any', async () => {
  assert.deepEqual(await members([
    { field: 'status', op: 'eq', value: 'active' },
    { match: 'any', conditions: [
      { field: 'attributes.plan', op: 'eq', value: 'pro' },
      { match: 'all', conditions: [{ field: 'list', op: 'eq', value: L2 }, { field: 'attributes.seats', op: 'lt', value: 5 }] },
    ] },
  ]), ['ann', 'bob']);
  assert.deepEqual(await members([{ field: 'name', op: 'eq', value: 'Dan' }, { field: 'opened', op: 'within', value: 7 }], 'any'), ['ann', 'dan']);
});

test('segments: no conditions matches every subscriber', async () => {
  assert.deepEqual(await members([]), ['ann', 'bob', 'cat', 'dan', 'eve']);
});

test('segments: an unknown field is 422 naming it and its path', async () => {
  const body = await refused([{ field: 'favouriteColour', op: 'eq', value: 'red' }]);
  assert.equal(body.errors[0].field, 'conditions[0].field');
  assert.match(body.errors[0].message, /unknown field "favouriteColour"/);
});

test('segments: an unknown op is 422 naming it, also inside nested groups', async () => {
  const body = await refused([{ match: 'any', conditions: [{ field: 'email', op: 'eq', value: 'a@b.co' }, { field: 'email', op: 'like', value: '%' }] }]);
  assert.equal(body.errors[0].field, 'conditions[0].conditions[1].op');
  assert.match(body.errors[0].message, /unknown op "like"/);
});

test('segments: an op that does not apply to the field, or a value of the wrong type, is 422', async () => {
  assert.match((await refused([{ field: 'status', op: 'gt', value: 'active' }])).errors[0].message, /"gt" is not supported for field "status"/);
  assert.equal((await refused([{ field: 'status', op: 'eq', value: 'sleeping' }])).errors[0].field, 'conditions[0].value');
  assert.equal((await refused([{ field: 'createdAt', op: 'gt', value: 'yesterday' }])).errors[0].field, 'conditions[0].value');
  assert.equal((await refused([{ field: 'attributes.seats', op: 'gt', value: true }])).errors[0].field, 'conditions[0].value');
  assert.equal((await refused([{ field: 'email', op: 'in', value: [] }])).errors[0].field, 'conditions[0].value');
  assert.equal((await refused([{ field: 'opened', op: 'within', value: 0 }])).errors[0].field, 'conditions[0].value');
  assert.equal((await refused([{ field: 'list', op: 'exists', value: 'x' }])).errors[0].field, 'conditions[0].value');
  assert.equal((await refused([{ field: 'email', op: 'eq', value: 'x', extra: 1 }])).errors[0].field, 'conditions[0].extra');
  assert.equal((await refused([{ match: 'any', conditions: [] }])).errors[0].field, 'conditions[0].conditions');
  assert.equal((await refused([{ match: 'some', conditions: [{ field: 'name', op: 'exists' }] }])).errors[0].field, 'conditions[0].match');
  assert.equal((await refused(['email = 1'])).errors[0].field, 'conditions[0]');
  const all = await refused([{ field: 'nope', op: 'eq', value: 1 }, { field: 'email', op: 'nope' }]);
  assert.equal(all.errors.length, 2, 'every problem is reported');
});

test('segments: nesting deeper than 5 groups is refused', async () => {
  let node: Json = { field: 'name', op: 'exists' };
  for (let i = 0; i < 6; i++) node = { match: 'all', conditions: [node] };
  const body = await refused([node]);
  assert.match(body.detail, /nested at most 5/);
});

test('segments: SQL in field names is refused as an unknown field, and nothing runs', async () => {
  for (const field of ['email; DROP TABLE subscribers; --', "email' OR '1'='1", 's.email', 'email)--', 'attributes', 'attributes.', 'attributes..x', 'EMAIL']) {
    const body = await refused([{ field, op: 'eq', value: 'x' }]);
    assert.equal(body.errors[0].field, 'conditions[0].field', field);
  }
  for (const op of ["eq' OR 1=1 --", '= ANY(SELECT id FROM accounts) OR 1=1']) {
    assert.match((await refused([{ field: 'email', op, value: 'x' }])).errors[0].message, /unknown op/);
  }
  assert.equal((await pool.query('SELECT count(*) AS n FROM subscribers WHERE account_id = $1', [acme.accountId])).rows[0].n, 5);
});

test('segments: SQL in attribute keys and values is data, never SQL', async () => {
  const attacks = ["' OR '1'='1", "x'; DROP TABLE subscribers; --", "ann@alpha.example' --", '%', '_', '\\', '$1', "') OR TRUE --"];
  for (const value of attacks) {
    assert.deepEqual(await one('email', 'eq', value), [], value);
    assert.deepEqual(await one('name', 'contains', value), [], value);
    assert.deepEqual(await one('attributes.plan', 'eq', value), [], value);
    // A list id must name one of the account's lists: refused as data.
    assert.equal((await refused([{ field: 'list', op: 'eq', value }])).errors[0].message, `unknown list ${value}`, value);
    assert.deepEqual(await one('email', 'in', [value]), [], value);
  }
  assert.deepEqual(await one("attributes.plan'); DROP TABLE subscribers; --", 'exists'), []);
  assert.deepEqual(await one("attributes.x' || (SELECT string_agg(id, ',') FROM accounts) || '", 'eq', 'y'), []);
  assert.deepEqual(await one('attributes.seats', 'gt', 0), ['ann', 'bob', 'cat', 'eve'], 'the table is intact');
});

test('segments: create, get, list with live counts, patch, delete', async () => {
  const created = await api.post('/api/v1/segments', { name: '  Pros ', conditions: [{ field: 'attributes.plan', op: 'eq', value: 'pro' }] });
  assert.equal(created.status, 201);
  assert.match(created.body.id, /^seg_[0-9a-f]{32}$/);
  assert.equal(created.body.name, 'Pros');
  assert.equal(created.body.match, 'all');
  assert.equal(created.body.subscriberCount, 1);
  const id = created.body.id;
  const got = await api.get(`/api/v1/segments/${id}`);
  assert.deepEqual(got.body.conditions, [{ field: 'attributes.plan', op: 'eq', value: 'pro' }]);
  await makeSubscriber(app, acme.live, { email: 'newpro@example.com', attributes: { plan: 'pro' } });
  assert.equal((await api.get(`/api/v1/segments/${id}`)).body.subscriberCount, 2, 'live');
  const listed = await allPages(app, acme.live, '/api/v1/segments?limit=5');
  assert.equal(listed.find((s: Json) => s.id === id).subscriberCount, 2);
  const patched = await api.patch(`/api/v1/segments/${id}`, { match: 'any', conditions: [{ field: 'attributes.plan', op: 'in', value: ['pro', 'free'] }] });
  assert.equal(patched.status, 200);
  assert.equal(patched.body.match, 'any');
  assert.equal(patched.body.subscriberCount, 3);
  assert.equal(patched.body.name, 'Pros');
  assert.equal((await api.patch(`/api/v1/segments/${id}`, { conditions: [{ field: 'bogus', op: 'eq', value: 1 }] })).status, 422);
  assert.equal((await api.delete(`/api/v1/segments/${id}`)).status, 204);
  assert.equal((await api.get(`/api/v1/segments/${id}`)).status, 404);
  assert.equal((await api.get(`/api/v1/segments/${id}/subscribers`)).status, 404);
  assert.equal((await api.delete(`/api/v1/segments/${id}`)).status, 404);
  await api.delete('/api/v1/subscribers/newpro@example.com');
});

test('segments: list counts of several segments in one page are each right', async () => {
  const acct = await createTestAccount(pool, 'Counts');
  for (let i = 0; i < 6; i++) await makeSubscriber(app, acct.live, { email: `c${i}@example.com`, attributes: { n: i } });
  const c = client(app, acct.live);
  for (const min of [0, 2, 4, 6]) await c.post('/api/v1/segments', { name: `n>=${min}`, conditions: [{ field: 'attributes.n', op: 'gte', value: min }] });
  const page = await c.get('/api/v1/segments?order=asc');
  assert.deepEqual(page.body.data.map((s: Json) => [s.name, s.subscriberCount]), [['n>=0', 6], ['n>=2', 4], ['n>=4', 2], ['n>=6', 0]]);
});

test('segments: a test key validates and counts but stores no segment', async () => {
  const t = client(app, acme.test);
  const res = await t.post('/api/v1/segments', { name: 'Sandboxed', conditions: [{ field: 'status', op: 'eq', value: 'active' }] });
  assert.equal(res.status, 201);
  assert.equal(res.body.sandbox, true);
  assert.equal(res.body.subscriberCount, 3);
  assert.equal((await api.get(`/api/v1/segments/${res.body.id}`)).status, 404);
  assert.equal((await t.post('/api/v1/segments', { name: 'Bad', conditions: [{ field: 'x', op: 'eq', value: 1 }] })).status, 422);
});

test('segments: counts in a listing page equal each segment’s own count', async () => {
  // Every kind of condition, positive and negated, top-level and nested.
  for (const conditions of [
    [{ field: 'list', op: 'neq', value: L1 }],
    [{ field: 'list', op: 'not_exists' }],
    [{ field: 'opened', op: 'not_within', value: 7 }],
    [{ field: 'received', op: 'exists' }],
    [{ match: 'any', conditions: [{ field: 'list', op: 'eq', value: L2 }, { field: 'clicked', op: 'exists' }] }],
    [{ match: 'any', conditions: [{ field: 'list', op: 'not_exists' }, { field: 'opened', op: 'not_exists' }] }],
  ]) await api.post('/api/v1/segments', { name: 'Mixed', conditions });
  const listed = await allPages(app, acme.live, '/api/v1/segments?limit=50');
  assert.ok(listed.length > 50, 'more than one page');
  for (const s of listed) {
    assert.equal(s.subscriberCount, (await api.get(`/api/v1/segments/${s.id}`)).body.subscriberCount, JSON.stringify(s.conditions));
  }
});
