import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';

/**
 * An id of another account is never accepted as a reference. Every field
 * that names another resource answers 422 for B's ids, with live and test keys alike, and
 * nothing is stored.
 */
const { app, pool, config } = await bootApp();
const a = await createTestAccount(pool, 'A');
const b = await createTestAccount(pool, 'B');
const json = (h: Record<string, string>) => ({ ...h, 'content-type': 'application/json' });
const post = (h: Record<string, string>, url: string, payload: unknown, method: 'POST' | 'PATCH' = 'POST') => app.inject({ method, url, headers: json(h), payload: payload as object });

await createVerifiedDomain(pool, a.accountId, 'a-corp.test', config.secret);
const bTemplate = (await post(b.live, '/api/v1/templates', { name: 'B tpl', subject: 'B', html: '<p>B {{ confirm_url }}</p>' })).json().id as string;
const bList = (await post(b.live, '/api/v1/lists', { name: 'B list' })).json().id as string;
const aTemplate = (await post(a.live, '/api/v1/templates', { name: 'A tpl', subject: 'A', html: '<p>A {{ confirm_url }}</p>' })).json().id as string;
const aList = (await post(a.live, '/api/v1/lists', { name: 'A list' })).json().id as string;
const aSubscriber = (await post(a.live, '/api/v1/subscribers', { email: 'sub@a-corp.test', list: aList })).json().id as string;
const aSegment = (await post(a.live, '/api/v1/segments', { name: 'A seg', match: 'all', conditions: [{ field: 'list', op: 'eq', value: aList }] })).json().id as string;

function assert422(res: { statusCode: number; body: string; json: () => { errors: { field: string }[] } }, what: string, field?: string): void {
  assert.equal(res.statusCode, 422, `${what}: ${res.statusCode} ${res.body}`);
  if (field) assert.ok(res.json().errors.some((e: { field: string }) => e.field === field), `${what}: ${res.body}`);
}

async function counts(): Promise<string> {
  const { rows } = await pool.query(`SELECT (SELECT count(*) FROM lists WHERE account_id = $1) AS l, (SELECT count(*) FROM segments WHERE account_id = $1) AS s,
    (SELECT count(*) FROM subscriber_lists WHERE account_id = $1) AS m, (SELECT count(*) FROM subscriber_imports WHERE account_id = $1) AS i`, [a.accountId]);
  return JSON.stringify(rows[0]);
}

test("references: a list's confirmationTemplateId of another account is a 422, on create and update, for both keys", async () => {
  const before = await counts();
  for (const key of [a.live, a.test]) {
    assert422(await post(key, '/api/v1/lists', { name: 'x', doubleOptIn: true, confirmationTemplateId: bTemplate }), 'create', 'confirmationTemplateId');
    assert422(await post(key, `/api/v1/lists/${aList}`, { confirmationTemplateId: bTemplate }, 'PATCH'), 'update', 'confirmationTemplateId');
  }
  assert.equal(await counts(), before);
  const ok = await post(a.live, '/api/v1/lists', { name: 'own', doubleOptIn: true, confirmationTemplateId: aTemplate });
  assert.equal(ok.statusCode, 201, ok.body);
  const { rows } = await pool.query('SELECT confirmation_template_id FROM lists WHERE account_id = $1 AND confirmation_template_id IS NOT NULL', [a.accountId]);
  assert.deepEqual(rows.map((r) => r.confirmation_template_id), [aTemplate]);
});

test("references: segment conditions on another account's list are a 422 (eq, neq, in, nested), on create and update", async () => {
  const before = await counts();
  const defs = [
    [{ field: 'list', op: 'eq', value: bList }],
    [{ field: 'list', op: 'neq', value: bList }],
    [{ field: 'list', op: 'in', value: [aList, bList] }],
    [{ field: 'email', op: 'contains', value: 'x' }, { match: 'any', conditions: [{ field: 'list', op: 'eq', value: bList }] }],
  ];
  for (const key of [a.live, a.test]) {
    for (const conditions of defs) {
      assert422(await post(key, '/api/v1/segments', { name: 'x', match: 'all', conditions }), `create ${JSON.stringify(conditions)}`, 'conditions');
      assert422(await post(key, `/api/v1/segments/${aSegment}`, { conditions }, 'PATCH'), `update ${JSON.stringify(conditions)}`, 'conditions');
    }
  }
  assert.equal(await counts(), before);
  const seg = (await app.inject({ url: `/api/v1/segments/${aSegment}`, headers: a.live })).json();
  assert.deepEqual(seg.conditions, [{ field: 'list', op: 'eq', value: aList }]);
});

test("references: subscribers and imports naming another account's list are a 422", async () => {
  const before = await counts();
  for (const key of [a.live, a.test]) {
    assert422(await post(key, '/api/v1/subscribers', { email: 'n1@a-corp.test', list: bList }), 'subscriber list', 'list');
    assert422(await post(key, '/api/v1/subscribers', { email: 'n2@a-corp.test', lists: [aList, bList] }), 'subscriber lists', 'lists');
    assert422(await post(key, `/api/v1/subscribers/${aSubscriber}`, { addLists: [bList] }, 'PATCH'), 'addLists', 'addLists');
    assert422(await post(key, `/api/v1/subscribers/${aSubscriber}`, { removeLists: [bList] }, 'PATCH'), 'removeLists', 'removeLists');
    assert422(await post(key, '/api/v1/subscribers/import', { list: bList, subscribers: [{ email: 'i@a-corp.test' }] }), 'import JSON', 'list');
    const csv = await app.inject({ method: 'POST', url: `/api/v1/subscribers/import?list=${bList}`, headers: { ...key, 'content-type': 'text/csv' }, payload: 'email\ni@a-corp.test\n' });
    assert422(csv, 'import CSV', 'list');
  }
  assert.equal(await counts(), before);
});

test("references: a send with another account's templateId is a 422 template_error, for both keys", async () => {
  for (const key of [a.live, a.test]) {
    const res = await post(key, '/api/v1/emails', { to: 'x@example.net', from: { email: 'hi@a-corp.test' }, templateId: bTemplate });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().code, 'template_error');
  }
});
