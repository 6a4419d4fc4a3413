import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * A test key performs no real action on ANY write route. Every
 * POST / PUT / PATCH / DELETE of the OpenAPI document is called with the test key, then the
 * same request with the live key: same status (the send routes excepted: 200 sandbox vs 202
 * queued, as the spec says), same error codes, the same answer fields plus `sandbox: true`, an
 * empty 204 stays empty, and the database is unchanged by the test-key call. Routes added later
 * are covered by this test without anyone remembering to.
 */
const receiver = await startWebhookReceiver();
after(() => receiver.close());
const { app, pool, config } = await bootApp();
const a = await createTestAccount(pool, 'A');
const json = (h: Record<string, string>) => ({ ...h, 'content-type': 'application/json' });

async function create(url: string, payload: unknown): Promise<Record<string, string>> {
  const res = await app.inject({ method: 'POST', url, headers: json(a.live), payload: payload as object });
  assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
  return res.json();
}

const domain = await createVerifiedDomain(pool, a.accountId, 'acme.com', config.secret);
const template = await create('/api/v1/templates', { name: 'Welcome', subject: 'Hi', html: '<p>A</p>' });
const hook = await create('/api/v1/hooks', { url: receiver.url, events: ['open'] });
const list = await create('/api/v1/lists', { name: 'Main' });
const subscriber = await create('/api/v1/subscribers', { email: 'member@acme.com', list: list.id });
const segment = await create('/api/v1/segments', { name: 'Seg', match: 'all', conditions: [{ field: 'email', op: 'contains', value: 'acme' }] });
const email = await create('/api/v1/emails', { to: 'x@example.net', from: { email: 'hi@acme.com' }, subject: 'A', text: 'a' });
const importJob = await create('/api/v1/subscribers/import', { list: list.id, subscribers: [{ email: 'imported@acme.com' }] });
await create('/api/v1/suppression', { email: 'blocked@acme.com', reason: 'manual' });
const automation = await create('/api/v1/automations', { name: 'Drip', trigger: { event: 'signup' }, steps: [{ type: 'wait', duration: '1d' }, { type: 'send', templateId: template.id, from: { email: 'hi@acme.com' } }] });
const idOf: Record<string, string> = {
  dom: domain.id, tpl: template.id, hook: hook.id, lst: list.id, sub: subscriber.id, seg: segment.id, msg: email.id, imp: importJob.id, aut: automation.id,
};
const byResource: Record<string, string> = {
  domains: domain.id, templates: template.id, hooks: hook.id, lists: list.id, subscribers: subscriber.id, segments: segment.id, emails: email.id, captured: email.id, imports: importJob.id, automations: automation.id,
};

/** Example ids of the document point at this account's real resources, so the calls do real work. */
function realIds(value: unknown): unknown {
  if (typeof value === 'string') {
    const m = /^([a-z]+)_[0-9a-f]{32}$/.exec(value);
    return m && idOf[m[1]] ? idOf[m[1]] : value;
  }
  if (Array.isArray(value)) return value.map(realIds);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, realIds(v)]));
  return value;
}

/** Rows of every table but the bookkeeping each authenticated request does (rate limit, key use, idempotency). */
async function snapshot(): Promise<Record<string, string>> {
  const { rows: tables } = await pool.query(
    `SELECT schemaname, tablename FROM pg_tables
      WHERE schemaname IN ('public', 'graphile_worker')
        AND tablename NOT IN ('rate_limit_windows', 'api_keys', 'idempotency_keys', 'schema_migrations', 'migrations')`,
  );
  const out: Record<string, string> = {};
  for (const t of tables) {
    const { rows } = await pool.query(`SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h, count(*)::int AS n FROM "${t.schemaname}"."${t.tablename}" x`);
    out[`${t.schemaname}.${t.tablename}`] = `${rows[0].n}:${rows[0].h}`;
  }
  return out;
}

interface Op { method: string; path: string; body: unknown }
const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();
const ops: Op[] = [];
for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: { examples?: unknown[] }; example?: unknown }> } }>>)) {
  if (!path.startsWith('/api/v1/')) continue;
  for (const [method, op] of Object.entries(item)) {
    if (!['post', 'put', 'patch', 'delete'].includes(method)) continue;
    const media = op.requestBody?.content?.['application/json'];
    const example = media?.schema?.examples?.[0] ?? media?.example;
    ops.push({ method: method.toUpperCase(), path, body: op.requestBody ? realIds(example ?? {}) : undefined });
  }
}
ops.sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));

test('test keys: POST /domains creates nothing the live key sees; DELETE /domains and /hooks delete nothing; rotate-secret keeps the secret', async () => {
  const created = await app.inject({ method: 'POST', url: '/api/v1/domains', headers: json(a.test), payload: { name: 'sandbox-only.example' } });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.json().sandbox, true);
  const listed = (await app.inject({ url: '/api/v1/domains', headers: a.live })).json();
  assert.ok(!JSON.stringify(listed).includes('sandbox-only.example'));
  const hooks = await pool.query('SELECT secret FROM hooks WHERE id = $1', [hook.id]);
  const rotated = await app.inject({ method: 'POST', url: `/api/v1/hooks/${hook.id}/rotate-secret`, headers: a.test });
  assert.equal(rotated.statusCode, 200);
  assert.equal((await pool.query('SELECT secret FROM hooks WHERE id = $1', [hook.id])).rows[0].secret, hooks.rows[0].secret);
  for (const url of [`/api/v1/domains/${domain.id}`, `/api/v1/hooks/${hook.id}`]) {
    const res = await app.inject({ method: 'DELETE', url, headers: a.test });
    assert.ok(res.statusCode < 300, `${url}: ${res.statusCode} ${res.body}`);
    assert.equal((await app.inject({ url, headers: a.live })).statusCode, 200, `${url} still there`);
  }
});

test('test keys: POST /hooks/{id}/test sends no request', async () => {
  const h = await create('/api/v1/hooks', { url: receiver.url, events: ['click'] });
  const before = receiver.requests.length;
  const res = await app.inject({ method: 'POST', url: `/api/v1/hooks/${h.id}/test`, headers: a.test });
  assert.equal(res.statusCode, 200, res.body);
  assert.equal(res.json().sandbox, true);
  assert.equal(res.json().delivered, false);
  assert.equal(receiver.requests.length, before);
  const live = await app.inject({ method: 'POST', url: `/api/v1/hooks/${h.id}/test`, headers: a.live });
  assert.equal(live.json().delivered, true);
  assert.equal(receiver.requests.length, before + 1);
});

test('test keys: an unverified sender domain is 422 sender_domain_unverified, and a suppressed recipient 422, as with the live key', async () => {
  for (const key of [a.test, a.live]) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/emails', headers: json(key), payload: { to: 'x@example.net', from: { email: 'me@unverified.example' }, subject: 's', text: 't' } });
    assert.equal(res.statusCode, 422);
    assert.equal(res.json().code, 'sender_domain_unverified');
    const suppressed = await app.inject({ method: 'POST', url: '/api/v1/emails', headers: json(key), payload: { to: 'blocked@acme.com', from: { email: 'hi@acme.com' }, subject: 's', text: 't' } });
    assert.equal(suppressed.json().code, 'recipient_suppressed');
    const batch = await app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: json(key), payload: { emails: [{ to: 'x@example.net', from: { email: 'me@unverified.example' }, subject: 's', text: 't' }] } });
    assert.equal(batch.json().data[0].error.code, 'sender_domain_unverified');
  }
});

test('test keys: Idempotency-Key works with a test key, and replays the sandbox answer', async () => {
  const headers = { ...json(a.test), 'idempotency-key': 'sandbox-idem-1' };
  const first = await app.inject({ method: 'POST', url: '/api/v1/lists', headers, payload: { name: 'Idem' } });
  const second = await app.inject({ method: 'POST', url: '/api/v1/lists', headers, payload: { name: 'Idem' } });
  assert.equal(first.statusCode, 201);
  assert.equal(second.statusCode, 201);
  assert.equal(second.headers['idempotent-replayed'], 'true');
  assert.deepEqual(second.json(), first.json());
  assert.equal(first.json().sandbox, true);
});

test('test keys: live requests running at the same time as test-key writes are written for real', async () => {
  const names = Array.from({ length: 20 }, (_, i) => `concurrent-${i}`);
  const res = await Promise.all(names.flatMap((name) => [
    app.inject({ method: 'POST', url: '/api/v1/lists', headers: json(a.test), payload: { name: `${name}-sandbox` } }),
    app.inject({ method: 'POST', url: '/api/v1/lists', headers: json(a.live), payload: { name } }),
  ]));
  assert.ok(res.every((r) => r.statusCode === 201));
  const { rows } = await pool.query(`SELECT name FROM lists WHERE account_id = $1 AND name LIKE 'concurrent-%'`, [a.accountId]);
  assert.deepEqual(rows.map((r) => r.name).sort(), [...names].sort());
});

// Last: its live calls delete this account's resources.
test('test keys: every write route answers as the live key would, with sandbox: true, and changes nothing', async () => {
  assert.ok(ops.length >= 20, `${ops.length} write operations`);
  const report: string[] = [];
  for (const op of ops) {
    const url = op.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(byResource[op.path.split('/')[3]] ?? 'x'));
    const call = (headers: Record<string, string>) =>
      app.inject({ method: op.method as 'POST', url, headers: op.body === undefined ? headers : json(headers), payload: op.body as object });
    const before = await snapshot();
    const sent = receiver.requests.length;
    const t = await call(a.test);
    const changed = Object.entries(await snapshot()).filter(([k, v]) => before[k] !== v).map(([k]) => k);
    assert.deepEqual(changed, [], `${op.method} ${op.path} with the test key changed ${changed.join(', ')}`);
    assert.equal(receiver.requests.length, sent, `${op.method} ${op.path} with the test key sent a webhook request`);
    const l = await call(a.live);
    report.push(`${op.method} ${op.path}: test ${t.statusCode}, live ${l.statusCode}`);
    // Every write, sends and the automation trigger included, answers as the live key does.
    assert.equal(t.statusCode, l.statusCode, `${op.method} ${op.path}: test ${t.statusCode} ${t.body.slice(0, 300)} / live ${l.statusCode} ${l.body.slice(0, 300)}`);
    if (l.statusCode === 204) {
      assert.equal(t.body, '', `${op.method} ${op.path}: a 204 stays empty`);
    } else if (l.statusCode < 300) {
      const tb = t.json();
      const lb = l.json();
      assert.equal(tb.sandbox, true, `${op.method} ${op.path}: ${t.body.slice(0, 200)}`);
      const keys = (o: object) => Object.keys(o).filter((k) => k !== 'sandbox').sort();
      assert.deepEqual(keys(tb), keys(lb), `${op.method} ${op.path}: same answer fields`);
    } else {
      assert.equal(t.json().code, l.json().code, `${op.method} ${op.path}: same error`);
    }
  }
  assert.ok(report.filter((r) => / test 2\d\d/.test(r)).length >= 10, report.join('\n'));
});
