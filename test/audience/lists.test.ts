import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { allPages, client, makeList, makeSubscriber } from './helpers.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const api = client(app, acme.live);

test('lists: create answers 201 with the list, ids lst_ and ISO timestamps with ms', async () => {
  const res = await api.post('/api/v1/lists', { name: '  Newsletter ', description: 'Monthly', doubleOptIn: true });
  assert.equal(res.status, 201);
  assert.match(res.body.id, /^lst_[0-9a-f]{32}$/);
  assert.equal(res.body.name, 'Newsletter');
  assert.equal(res.body.description, 'Monthly');
  assert.equal(res.body.doubleOptIn, true);
  assert.equal(res.body.confirmationTemplateId, null);
  assert.equal(res.body.subscriberCount, 0);
  assert.match(res.body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(res.body.createdAt, res.body.updatedAt);
});

test('lists: doubleOptIn defaults to false and description to null', async () => {
  const res = await api.post('/api/v1/lists', { name: 'Plain' });
  assert.equal(res.body.doubleOptIn, false);
  assert.equal(res.body.description, null);
});

test('lists: name of 200 characters is accepted, 201 or blank is 422 naming the field', async () => {
  assert.equal((await api.post('/api/v1/lists', { name: 'x'.repeat(200) })).status, 201);
  const long = await api.post('/api/v1/lists', { name: 'x'.repeat(201) });
  assert.equal(long.status, 422);
  assert.equal(long.body.errors[0].field, 'name');
  const blank = await api.post('/api/v1/lists', { name: '   ' });
  assert.equal(blank.status, 422);
  assert.equal(blank.body.errors[0].field, 'name');
  const missing = await api.post('/api/v1/lists', {});
  assert.equal(missing.status, 422);
});

test('lists: unknown fields are refused', async () => {
  const res = await api.post('/api/v1/lists', { name: 'A', colour: 'red' });
  assert.equal(res.status, 422);
  assert.equal(res.body.errors[0].field, 'colour');
});

test('lists: get returns the list; unknown id is 404 not_found', async () => {
  const id = await makeList(app, acme.live, { name: 'Get me' });
  const res = await api.get(`/api/v1/lists/${id}`);
  assert.equal(res.status, 200);
  assert.equal(res.body.name, 'Get me');
  const missing = await api.get('/api/v1/lists/lst_00000000000000000000000000000000');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.code, 'not_found');
});

test('lists: patch changes only the given fields; null clears the description', async () => {
  const id = await makeList(app, acme.live, { name: 'Before', description: 'keep?' });
  const res = await api.patch(`/api/v1/lists/${id}`, { name: 'After', doubleOptIn: true });
  assert.equal(res.status, 200);
  assert.equal(res.body.name, 'After');
  assert.equal(res.body.description, 'keep?');
  assert.equal(res.body.doubleOptIn, true);
  assert.ok(res.body.updatedAt >= res.body.createdAt);
  const template = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: { ...acme.live, 'content-type': 'application/json' }, payload: { name: 'Confirm', subject: 'Confirm', html: '<p>{{ confirm_url }}</p>' } });
  const templateId = template.json().id as string;
  const cleared = await api.patch(`/api/v1/lists/${id}`, { description: null, confirmationTemplateId: templateId });
  assert.equal(cleared.body.description, null);
  assert.equal(cleared.body.confirmationTemplateId, templateId);
  assert.equal(cleared.body.name, 'After');
  assert.equal((await api.patch('/api/v1/lists/lst_00000000000000000000000000000000', { name: 'x' })).status, 404);
});

test('lists: subscriberCount counts the members', async () => {
  const id = await makeList(app, acme.live, { name: 'Counted' });
  for (const n of [1, 2, 3]) await makeSubscriber(app, acme.live, { email: `count${n}@example.com`, list: id });
  assert.equal((await api.get(`/api/v1/lists/${id}`)).body.subscriberCount, 3);
});

test('lists: deleting a list removes its memberships but keeps the subscribers and their other lists', async () => {
  const doomed = await makeList(app, acme.live, { name: 'Doomed' });
  const kept = await makeList(app, acme.live, { name: 'Kept' });
  const sub = await makeSubscriber(app, acme.live, { email: 'both@example.com', lists: [doomed, kept] });
  assert.deepEqual([...sub.lists].sort(), [doomed, kept].sort());
  const del = await api.delete(`/api/v1/lists/${doomed}`);
  assert.equal(del.status, 204);
  assert.equal((await api.get(`/api/v1/lists/${doomed}`)).status, 404);
  const after = await api.get(`/api/v1/subscribers/${sub.id}`);
  assert.equal(after.status, 200);
  assert.deepEqual(after.body.lists, [kept]);
  assert.equal((await api.get(`/api/v1/lists/${kept}`)).body.subscriberCount, 1);
  assert.equal((await api.delete(`/api/v1/lists/${doomed}`)).status, 404);
});

test('lists: pages follow nextCursor without gaps or repeats, newest first by default', async () => {
  const other = await createTestAccount(pool, 'Pager');
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push(await makeList(app, other.live, { name: `L${i}` }));
  const desc = await allPages(app, other.live, '/api/v1/lists?limit=3');
  assert.deepEqual(desc.map((l) => l.id), [...ids].reverse());
  const asc = await allPages(app, other.live, '/api/v1/lists?limit=2&order=asc');
  assert.deepEqual(asc.map((l) => l.id), ids);
});

test('lists: a test key creates nothing and says sandbox', async () => {
  const testApi = client(app, acme.test);
  const res = await testApi.post('/api/v1/lists', { name: 'Sandboxed' });
  assert.equal(res.status, 201);
  assert.equal(res.body.sandbox, true);
  assert.equal((await api.get(`/api/v1/lists/${res.body.id}`)).status, 404);
  const invalid = await testApi.post('/api/v1/lists', { name: '' });
  assert.equal(invalid.status, 422, 'validation still applies');
});
