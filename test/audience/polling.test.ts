import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { client, makeList, makeSubscriber, type Json } from './helpers.js';

const { app, pool } = await bootApp();

let n = 0;
async function addSubscribers(headers: Record<string, string>, count: number, list?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await makeSubscriber(app, headers, { email: `p${n++}@example.com`, ...(list ? { list } : {}) })).id);
  return ids;
}

test('polling: limit=50&order=desc over a set growing between polls misses and repeats nothing after dedupe by id', async () => {
  const acct = await createTestAccount(pool, 'Connector');
  const api = client(app, acct.live);
  const created = await addSubscribers(acct.live, 30);
  const seen = new Set<string>();
  const triggered: string[] = [];
  // The connector's poll: first page only, newest first, new ids trigger once.
  const poll = async () => {
    const res = await api.get('/api/v1/subscribers?limit=50&order=desc');
    assert.equal(res.status, 200);
    const ids = res.body.data.map((s: Json) => s.id) as string[];
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    for (const id of ids) if (!seen.has(id)) {
      seen.add(id);
      triggered.push(id);
    }
  };
  await poll();
  for (const growth of [1, 7, 0, 49, 12]) {
    created.push(...(await addSubscribers(acct.live, growth)));
    await poll();
  }
  assert.equal(triggered.length, new Set(triggered).size, 'no repeats');
  assert.deepEqual([...triggered].sort(), [...created].sort(), 'nothing missed');
});

test('polling: after a burst larger than a page, following nextCursor down to a known id catches up', async () => {
  const acct = await createTestAccount(pool, 'Burst');
  const api = client(app, acct.live);
  const first = await addSubscribers(acct.live, 10);
  const seen = new Set(first);
  const burst = await addSubscribers(acct.live, 120);
  const caught: string[] = [];
  let cursor: string | null = null;
  outer: for (;;) {
    const res = await api.get(`/api/v1/subscribers?limit=50&order=desc${cursor ? `&cursor=${cursor}` : ''}`);
    for (const s of res.body.data as Json[]) {
      if (seen.has(s.id)) break outer;
      caught.push(s.id);
    }
    cursor = res.body.nextCursor;
    if (!cursor) break;
  }
  assert.deepEqual([...caught].sort(), [...burst].sort());
});

test('pagination: a cursor stays valid and stable while subscribers are added (desc and asc)', async () => {
  const acct = await createTestAccount(pool, 'Stable');
  const api = client(app, acct.live);
  const initial = await addSubscribers(acct.live, 25);
  for (const order of ['desc', 'asc'] as const) {
    const got: string[] = [];
    let res = await api.get(`/api/v1/subscribers?limit=10&order=${order}`);
    got.push(...res.body.data.map((s: Json) => s.id));
    let inserted: string[] = [];
    while (res.body.nextCursor) {
      inserted = inserted.concat(await addSubscribers(acct.live, 3));
      res = await api.get(`/api/v1/subscribers?limit=10&order=${order}&cursor=${res.body.nextCursor}`);
      got.push(...res.body.data.map((s: Json) => s.id));
    }
    assert.equal(got.length, new Set(got).size, `${order}: no repeats`);
    if (order === 'desc') {
      assert.deepEqual(got, [...initial].sort().reverse(), 'desc walks exactly the rows that existed, untouched by inserts');
      initial.push(...inserted);
    } else {
      // asc reaches the newest rows last, so rows added meanwhile show up at the end, once each.
      assert.deepEqual(got.slice(0, initial.length), [...initial].sort());
      assert.deepEqual(got, [...got].sort());
    }
  }
});

test('pagination: the list filter pages through a list by id with the same cursor rules', async () => {
  const acct = await createTestAccount(pool, 'ListPager');
  const list = await makeList(app, acct.live);
  const members = await addSubscribers(acct.live, 23, list);
  await addSubscribers(acct.live, 5);
  const api = client(app, acct.live);
  const got: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await api.get(`/api/v1/subscribers?list=${list}&limit=7${cursor ? `&cursor=${cursor}` : ''}`);
    got.push(...res.body.data.map((s: Json) => s.id));
    cursor = res.body.nextCursor;
  } while (cursor);
  assert.deepEqual(got, [...members].sort().reverse());
});
