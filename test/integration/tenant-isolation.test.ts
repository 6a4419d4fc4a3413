import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';

/**
 * Account B, with its own valid key, tries every route that names a resource, against account
 * A's resources: each answer is 404, no list of B's shows A's data, and A's resources are
 * unchanged afterwards. Routes come from the OpenAPI document, so a new route with a path
 * parameter is covered (or fails this test) without anyone remembering to add it.
 */
const { app, pool, config } = await bootApp();
const a = await createTestAccount(pool, 'A');
const b = await createTestAccount(pool, 'B');
const json = (h: Record<string, string>) => ({ ...h, 'content-type': 'application/json' });

async function create(url: string, payload: unknown): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'POST', url, headers: json(a.live), payload: payload as object });
  assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const domain = await createVerifiedDomain(pool, a.accountId, 'a-corp.test', config.secret);
const template = await create('/api/v1/templates', { name: 'A welcome', subject: 'Hi', html: '<p>A</p>' });
const hook = await create('/api/v1/hooks', { url: 'http://127.0.0.1:9/hook', events: ['open'] });
const list = await create('/api/v1/lists', { name: 'A list' });
const subscriber = await create('/api/v1/subscribers', { email: 'member@a-corp.test', list: list.id });
const segment = await create('/api/v1/segments', { name: 'A seg', match: 'all', conditions: [{ field: 'email', op: 'contains', value: 'a-corp' }] });
const email = await create('/api/v1/emails', { to: 'x@example.net', from: { email: 'hi@a-corp.test' }, subject: 'A', text: 'a' });
const importJob = await create('/api/v1/subscribers/import', { list: list.id, subscribers: [{ email: 'imported@a-corp.test' }] });
await create('/api/v1/suppression', { email: 'blocked@a-corp.test', reason: 'manual' });
const campaign = await create('/api/v1/campaigns', { name: 'A campaign', subject: 'A news', from: { email: 'news@a-corp.test' }, html: '<p>A</p>', audience: { lists: [list.id] } });
const automation = await create('/api/v1/automations', {
  name: 'A welcome series', trigger: { event: 'signup' },
  steps: [{ type: 'wait', duration: '1d' }, { type: 'send', templateId: template.id, from: { email: 'hi@a-corp.test' } }],
});
const apiKey = await create('/api/v1/keys', { name: 'A key' });
const user = await create('/api/v1/users', { email: 'person@a-corp.test', password: 'a long passphrase' });

const idFor: Record<string, string> = {
  domains: domain.id,
  templates: template.id as string,
  hooks: hook.id as string,
  lists: list.id as string,
  subscribers: subscriber.id as string,
  segments: segment.id as string,
  emails: email.id as string,
  captured: email.id as string,
  imports: importJob.id as string,
  campaigns: campaign.id as string,
  automations: automation.id as string,
  keys: apiKey.id as string,
  users: user.id as string,
};
// A PATCH body the resource's schema accepts, so the answer is about the id, not the body.
const patchBody: Record<string, unknown> = { users: { email: 'hijacked@b-corp.test' } };

test('tenant isolation: every route with a resource id answers 404 to another account', async () => {
  const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();
  let checked = 0;
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    if (!path.startsWith('/api/v1/') || !path.includes('{')) continue;
    const resource = path.split('/')[3];
    const id = idFor[resource];
    assert.ok(id, `no resource of account A for ${path}: add one to this test`);
    const ids = resource === 'subscribers' ? [id, 'member@a-corp.test'] : [id];
    for (const method of Object.keys(ops)) {
      for (const target of ids) {
        const url = path.replace(/\{[^}]+\}/, encodeURIComponent(target));
        const bodyless = method === 'get' || method === 'delete';
        const res = await app.inject({ method: method.toUpperCase() as 'GET', url, headers: bodyless ? b.live : json(b.live), payload: bodyless ? undefined : method === 'patch' ? (patchBody[resource] ?? { name: 'hijacked' }) : {} });
        assert.equal(res.statusCode, 404, `${method.toUpperCase()} ${url} as B → ${res.statusCode} ${res.body.slice(0, 200)}`);
        checked++;
      }
    }
  }
  assert.ok(checked >= 25, `checked ${checked} route/method pairs`);
});

test("tenant isolation: B's lists never show A's data, and the suppression list is per account", async () => {
  for (const url of ['/api/v1/templates', '/api/v1/domains', '/api/v1/hooks', '/api/v1/lists', '/api/v1/subscribers', '/api/v1/segments', '/api/v1/emails', '/api/v1/captured', '/api/v1/imports', '/api/v1/suppression', '/api/v1/templates/folders', '/api/v1/campaigns', '/api/v1/automations', '/api/v1/keys', '/api/v1/users']) {
    const res = await app.inject({ url, headers: b.live });
    assert.equal(res.statusCode, 200, url);
    const body = res.body;
    for (const id of Object.values(idFor)) assert.ok(!body.includes(id), `${url} shows ${id}`);
    assert.ok(!body.includes('a-corp'), `${url} shows A's data`);
  }
  const check = (await app.inject({ url: '/api/v1/suppression?email=blocked@a-corp.test', headers: b.live })).json();
  assert.equal(check.suppressed, false);
  assert.equal((await app.inject({ method: 'DELETE', url: '/api/v1/suppression?email=blocked@a-corp.test', headers: b.live })).statusCode, 404);
});

test("tenant isolation: after B's attempts, A's resources are all still there and unchanged", async () => {
  for (const [resource, id] of Object.entries(idFor)) {
    if (resource === 'captured') continue; // nothing is captured: no worker ran
    const res = await app.inject({ url: `/api/v1/${resource}/${id}`, headers: a.live });
    assert.equal(res.statusCode, 200, `${resource} ${id}`);
  }
  assert.equal((await app.inject({ url: '/api/v1/suppression?email=blocked@a-corp.test', headers: a.live })).json().suppressed, true);
  assert.equal((await app.inject({ url: `/api/v1/templates/${template.id}`, headers: a.live })).json().name, 'A welcome');
  const c = (await app.inject({ url: `/api/v1/campaigns/${campaign.id}`, headers: a.live })).json();
  assert.equal(c.name, 'A campaign');
  assert.equal(c.status, 'draft');
});
