import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { client, makeList, makeSubscriber, type Json } from './helpers.js';

const { app, pool } = await bootApp();
const alice = await createTestAccount(pool, 'Alice Co');
const mallory = await createTestAccount(pool, 'Mallory Co');
const a = client(app, alice.live);
const m = client(app, mallory.live);

const list = await makeList(app, alice.live, { name: 'Private' });
const sub = await makeSubscriber(app, alice.live, { email: 'secret@example.com', name: 'Secret', list, attributes: { plan: 'pro' } });
const segment = (await a.post('/api/v1/segments', { name: 'Pros', conditions: [{ field: 'attributes.plan', op: 'eq', value: 'pro' }] })).body;
const imported = (await a.post('/api/v1/subscribers/import', { list, subscribers: [{ email: 'imp@example.com' }] })).body;

test("isolation: another account's list is 404 on get, patch and delete, and absent from its listing", async () => {
  assert.equal((await m.get(`/api/v1/lists/${list}`)).status, 404);
  assert.equal((await m.patch(`/api/v1/lists/${list}`, { name: 'Owned' })).status, 404);
  assert.equal((await m.delete(`/api/v1/lists/${list}`)).status, 404);
  assert.deepEqual((await m.get('/api/v1/lists')).body.data, []);
  assert.equal((await a.get(`/api/v1/lists/${list}`)).body.name, 'Private');
});

test("isolation: another account's subscriber is 404 by id and by email on get, patch and delete", async () => {
  for (const ref of [sub.id, 'secret@example.com']) {
    assert.equal((await m.get(`/api/v1/subscribers/${ref}`)).status, 404);
    assert.equal((await m.patch(`/api/v1/subscribers/${ref}`, { name: 'Pwned' })).status, 404);
    assert.equal((await m.delete(`/api/v1/subscribers/${ref}`)).status, 404);
  }
  assert.equal((await a.get(`/api/v1/subscribers/${sub.id}`)).body.name, 'Secret');
});

test("isolation: listings, search and filters never show another account's subscribers", async () => {
  assert.deepEqual((await m.get('/api/v1/subscribers')).body.data, []);
  assert.deepEqual((await m.get('/api/v1/subscribers?q=secret')).body.data, []);
  assert.deepEqual((await m.get(`/api/v1/subscribers?list=${list}`)).body.data, []);
});

test("isolation: another account's list cannot be joined, added or removed", async () => {
  const post = await m.post('/api/v1/subscribers', { email: 'mine@example.com', list });
  assert.equal(post.status, 422);
  const own = await makeSubscriber(app, mallory.live, { email: 'mine@example.com' });
  assert.equal((await m.patch(`/api/v1/subscribers/${own.id}`, { addLists: [list] })).status, 422);
  assert.equal((await m.patch(`/api/v1/subscribers/${own.id}`, { removeLists: [list] })).status, 422);
  assert.equal((await m.post('/api/v1/subscribers/import', { list, subscribers: [{ email: 'x@example.com' }] })).status, 422);
  assert.equal((await a.get(`/api/v1/lists/${list}`)).body.subscriberCount, 1);
});

test('isolation: the same address is a separate subscriber in each account', async () => {
  const theirs = await m.post('/api/v1/subscribers', { email: 'SECRET@example.com', name: 'Other' });
  assert.equal(theirs.status, 201, 'created, not an upsert of the other account');
  assert.notEqual(theirs.body.id, sub.id);
  assert.equal((await a.get(`/api/v1/subscribers/${sub.id}`)).body.name, 'Secret');
});

test("isolation: another account's segment is 404 everywhere, and segments count only the own account", async () => {
  assert.equal((await m.get(`/api/v1/segments/${segment.id}`)).status, 404);
  assert.equal((await m.patch(`/api/v1/segments/${segment.id}`, { name: 'x' })).status, 404);
  assert.equal((await m.delete(`/api/v1/segments/${segment.id}`)).status, 404);
  assert.equal((await m.get(`/api/v1/segments/${segment.id}/subscribers`)).status, 404);
  assert.deepEqual((await m.get('/api/v1/segments')).body.data, []);
  // A condition on another account's list is refused, not stored as a reference.
  const probe = await m.post('/api/v1/segments', { name: 'Probe', match: 'any', conditions: [{ field: 'list', op: 'eq', value: list }, { field: 'attributes.plan', op: 'eq', value: 'pro' }] });
  assert.equal(probe.status, 422);
  const own = await m.post('/api/v1/segments', { name: 'Own', match: 'any', conditions: [{ field: 'attributes.plan', op: 'eq', value: 'pro' }] });
  assert.equal(own.body.subscriberCount, 0);
  assert.deepEqual((await m.get(`/api/v1/segments/${own.body.id}/subscribers`)).body.data, []);
});

test("isolation: another account's import is 404 and absent from its listing", async () => {
  assert.equal((await m.get(`/api/v1/imports/${imported.id}`)).status, 404);
  assert.ok(!((await m.get('/api/v1/imports')).body.data as Json[]).some((i) => i.id === imported.id));
  assert.equal((await a.get(`/api/v1/imports/${imported.id}`)).status, 200);
});
