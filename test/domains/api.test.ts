import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadSigningKeys } from '../../src/domain/domains/domains.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { startDnsServer } from '../helpers/dns-server.js';

// An empty loopback zone, so the verify calls below never reach the real DNS.
const dns = await startDnsServer();
after(() => dns.close());
const { app, pool, config } = await bootApp({
  env: { POSTLINE_BASE_URL: 'https://mail.postline.test', POSTLINE_TRACKING_HOST: 'track.postline.test', POSTLINE_DNS_SERVERS: dns.address },
});
const acme = await createTestAccount(pool, 'Acme');
const other = await createTestAccount(pool, 'Other');

const post = (url: string, headers: Record<string, string>, payload?: unknown) =>
  app.inject({ method: 'POST', url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
const addDomain = (name: string, headers = acme.live) => post('/api/v1/domains', headers, { name });

test('create: 201 with pending status and every record to publish', async () => {
  const res = await addDomain('Shape.Example.com');
  assert.equal(res.statusCode, 201, res.body);
  const d = res.json();
  assert.match(d.id, /^dom_[0-9a-f]{32}$/);
  assert.equal(d.name, 'shape.example.com');
  assert.equal(d.status, 'pending');
  assert.equal(d.verifiedAt, null);
  assert.match(d.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.deepEqual(d.tracking, { host: 'track.shape.example.com', target: 'track.postline.test', status: 'pending', checkedAt: null });

  const by = Object.fromEntries(d.records.map((r: { purpose: string }) => [r.purpose, r]));
  assert.deepEqual(Object.keys(by), ['dkim', 'dkim_ed25519', 'return_path', 'spf', 'dmarc', 'tracking']);
  for (const r of d.records) {
    assert.deepEqual(Object.keys(r).sort(), ['checkedAt', 'detail', 'name', 'purpose', 'required', 'status', 'type', 'value', ...(r.type === 'MX' ? ['priority'] : [])].sort());
    assert.equal(r.status, 'pending');
  }
  assert.match(by.dkim.name, /^plr-[0-9a-f]{8}\._domainkey\.shape\.example\.com$/);
  assert.match(by.dkim.value, /^v=DKIM1; k=rsa; p=MIIBIjAN[A-Za-z0-9+/=]{380,}$/, 'RSA-2048 SubjectPublicKeyInfo');
  assert.match(by.dkim_ed25519.name, /^ple-[0-9a-f]{8}\._domainkey\.shape\.example\.com$/);
  assert.equal(Buffer.from(by.dkim_ed25519.value.split('p=')[1], 'base64').length, 32, 'raw Ed25519 key (RFC 8463)');
  assert.deepEqual([by.return_path.type, by.return_path.name, by.return_path.value, by.return_path.priority], ['MX', 'bounces.shape.example.com', 'mail.postline.test', 10]);
  assert.deepEqual([by.spf.type, by.spf.name, by.spf.value], ['TXT', 'bounces.shape.example.com', 'v=spf1 a:mail.postline.test ~all']);
  assert.deepEqual([by.dmarc.type, by.dmarc.name, by.dmarc.value], ['TXT', '_dmarc.shape.example.com', 'v=DMARC1; p=none;']);
  assert.deepEqual([by.tracking.type, by.tracking.name, by.tracking.value], ['CNAME', 'track.shape.example.com', 'track.postline.test']);
  assert.equal(by.dkim.required, true);
  assert.equal(by.tracking.required, false);
});

test('create: an IDN is stored in punycode', async () => {
  const res = await addDomain('bücher.example');
  assert.equal(res.statusCode, 201, res.body);
  assert.equal(res.json().name, 'xn--bcher-kva.example');
});

test('create: the same name twice in one account → 409 conflict, whatever its case', async () => {
  assert.equal((await addDomain('dup.example.com')).statusCode, 201);
  const res = await addDomain('DUP.example.com');
  assert.equal(res.statusCode, 409);
  assert.equal(res.json().code, 'conflict');
  assert.deepEqual(res.json().errors, [{ field: 'name', message: 'is already added to this account' }]);
});

test('create: another account may add the same name, with its own keys', async () => {
  const a = (await addDomain('shared.example.com')).json();
  const res = await addDomain('shared.example.com', other.live);
  assert.equal(res.statusCode, 201);
  assert.notEqual(res.json().records[0].name, a.records[0].name, 'different selectors');
  assert.notEqual(res.json().records[0].value, a.records[0].value, 'different keys');
});

test('create: invalid names → 422 validation_failed on field name', async () => {
  for (const name of ['localhost', 'example.com.', `${'a'.repeat(64)}.com`, 'exa mple.com', '']) {
    const res = await addDomain(name);
    assert.equal(res.statusCode, 422, name);
    assert.equal(res.json().code, 'validation_failed');
    assert.equal(res.json().errors[0].field, 'name');
  }
  const extra = await post('/api/v1/domains', acme.live, { name: 'ok.example.com', dkim: 'mine' });
  assert.equal(extra.statusCode, 422);
  assert.equal(extra.json().errors[0].field, 'dkim');
});

test('private keys are encrypted at rest and never in any response', async () => {
  const d = (await addDomain('secret.example.com')).json();
  const { rows } = await pool.query('SELECT rsa_private_key, ed_private_key FROM domains WHERE id = $1', [d.id]);
  assert.match(rows[0].rsa_private_key, /^v1\./);
  assert.match(rows[0].ed_private_key, /^v1\./);
  const keys = await loadSigningKeys(pool, d.id, config.secret);
  const secrets = [rows[0].rsa_private_key, rows[0].ed_private_key, ...keys.keys.map((k) => k.privateKeyPem.split('\n')[1])];

  const bodies = [
    (await app.inject({ url: `/api/v1/domains/${d.id}`, headers: acme.live })).body,
    (await app.inject({ url: '/api/v1/domains?limit=500', headers: acme.live })).body,
    (await post(`/api/v1/domains/${d.id}/verify`, acme.live)).body,
    (await post(`/api/v1/domains/${d.id}/tracking/verify`, acme.live)).body,
  ];
  for (const body of bodies) {
    assert.ok(!/PRIVATE KEY/.test(body));
    for (const s of secrets) assert.ok(!body.includes(s), 'no private key material');
  }
});

test('get, list (paginated, newest first) and delete', async () => {
  const acc = await createTestAccount(pool, 'Lister');
  const ids: string[] = [];
  for (const n of ['one', 'two', 'three']) ids.push((await addDomain(`${n}.example.com`, acc.live)).json().id);

  const got = await app.inject({ url: `/api/v1/domains/${ids[0]}`, headers: acc.live });
  assert.equal(got.statusCode, 200);
  assert.equal(got.json().name, 'one.example.com');

  const page1 = (await app.inject({ url: '/api/v1/domains?limit=2', headers: acc.live })).json();
  assert.deepEqual(page1.data.map((d: { id: string }) => d.id), [ids[2], ids[1]]);
  assert.ok(page1.nextCursor);
  const page2 = (await app.inject({ url: `/api/v1/domains?limit=2&cursor=${page1.nextCursor}`, headers: acc.live })).json();
  assert.deepEqual(page2.data.map((d: { id: string }) => d.id), [ids[0]]);
  assert.equal(page2.nextCursor, null);
  const asc = (await app.inject({ url: '/api/v1/domains?order=asc', headers: acc.live })).json();
  assert.deepEqual(asc.data.map((d: { id: string }) => d.id), ids);

  const del = await app.inject({ method: 'DELETE', url: `/api/v1/domains/${ids[1]}`, headers: acc.live });
  assert.equal(del.statusCode, 204);
  assert.equal(del.body, '');
  assert.equal((await app.inject({ url: `/api/v1/domains/${ids[1]}`, headers: acc.live })).statusCode, 404);
  assert.equal((await app.inject({ method: 'DELETE', url: `/api/v1/domains/${ids[1]}`, headers: acc.live })).statusCode, 404);
  assert.equal((await addDomain('two.example.com', acc.live)).statusCode, 201, 'a deleted name can be added again');
});

test('account isolation: another account gets 404 on every route and never sees the domain in its list', async () => {
  const d = (await addDomain('isolated.example.com')).json();
  const routes: [string, string][] = [
    ['GET', `/api/v1/domains/${d.id}`],
    ['POST', `/api/v1/domains/${d.id}/verify`],
    ['POST', `/api/v1/domains/${d.id}/tracking/verify`],
    ['DELETE', `/api/v1/domains/${d.id}`],
  ];
  for (const [method, url] of routes) {
    const res = await app.inject({ method: method as 'GET', url, headers: other.live });
    assert.equal(res.statusCode, 404, `${method} ${url}`);
    assert.equal(res.json().code, 'not_found');
  }
  const list = (await app.inject({ url: '/api/v1/domains?limit=500', headers: other.live })).json();
  assert.ok(!list.data.some((x: { id: string }) => x.id === d.id));
  const still = await app.inject({ url: `/api/v1/domains/${d.id}`, headers: acme.live });
  assert.equal(still.statusCode, 200, 'the other account\'s DELETE removed nothing');
  assert.equal(still.json().checkedAt, null, 'the other account\'s verify changed nothing');
});

test('auth: every domain route needs a key', async () => {
  assert.equal((await app.inject({ url: '/api/v1/domains' })).statusCode, 401);
  assert.equal((await app.inject({ method: 'POST', url: '/api/v1/domains', payload: { name: 'x.example.com' } })).statusCode, 401);
});

test('openapi: the domain routes are documented with schemas and examples', async () => {
  const doc = (await app.inject({ url: '/api/v1/openapi.json' })).json();
  const paths = doc.paths;
  const ops = [
    paths['/api/v1/domains'].get, paths['/api/v1/domains'].post,
    paths['/api/v1/domains/{id}'].get, paths['/api/v1/domains/{id}'].delete,
    paths['/api/v1/domains/{id}/verify'].post, paths['/api/v1/domains/{id}/tracking/verify'].post,
  ];
  for (const op of ops) {
    assert.ok(op, 'operation present');
    assert.deepEqual(op.security, [{ bearer: [] }, { apiKey: [] }, { session: [] }]);
    assert.ok(op.tags.includes('domains'));
    assert.ok(op.responses['401']);
  }
  const create = paths['/api/v1/domains'].post;
  assert.ok(JSON.stringify(create.requestBody).includes('example.com'), 'request example');
  assert.ok(JSON.stringify(create.responses['201']).includes('_domainkey'), 'response example');
  assert.ok(create.responses['409'] && create.responses['422']);
  assert.ok(paths['/api/v1/domains/{id}'].get.responses['404']);
  assert.ok(paths['/api/v1/domains/{id}'].delete.responses['204']);
  assert.ok(JSON.stringify(paths['/api/v1/domains/{id}/verify'].post.responses['200']).includes('temp_error'), 'status values documented');
});
