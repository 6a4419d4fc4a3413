import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';

const dir = () => mkdtempSync(join(tmpdir(), 'postline-cfg-'));

test('config: defaults follow docs/architecture.md#configuration', () => {
  const c = loadConfig({ POSTLINE_DATA_DIR: dir() });
  assert.equal(c.port, 3000);
  assert.equal(c.host, '0.0.0.0');
  assert.equal(c.baseUrl, 'http://localhost:3000');
  assert.equal(c.trackingHost, 'localhost');
  assert.equal(c.delivery, 'mx');
  assert.equal(c.mxPort, 25);
  assert.equal(c.webhookAllowPrivate, false);
  assert.equal(c.bodyLimit, 10 * 1024 * 1024);
  assert.equal(c.deliveryConcurrency, 200);
  assert.equal(c.mxConnectionsPerHost, 10);
  assert.deepEqual(c.rateLimits, { live: 600, test: 120 });
  assert.equal(c.workerSemiSpaceMb, 16);
});

test('config: POSTLINE_WORKER_SEMI_SPACE_MB takes 0 (V8 sizes it) to 1024', () => {
  const semi = (v: string) => loadConfig({ POSTLINE_DATA_DIR: dir(), POSTLINE_WORKER_SEMI_SPACE_MB: v }).workerSemiSpaceMb;
  assert.equal(semi('0'), null);
  assert.equal(semi('1'), 1);
  assert.equal(semi('1024'), 1024);
  for (const bad of ['-1', '1025', '16MB', '1.5']) {
    assert.throws(() => semi(bad), (e: unknown) => e instanceof ConfigError && e.variable === 'POSTLINE_WORKER_SEMI_SPACE_MB', bad);
  }
});

test('config: generated secrets persist in the data dir', () => {
  const d = dir();
  const a = loadConfig({ POSTLINE_DATA_DIR: d });
  const b = loadConfig({ POSTLINE_DATA_DIR: d });
  assert.equal(a.secret, b.secret);
  assert.equal(a.fblSecret, b.fblSecret);
  assert.ok(a.secret.length >= 32);
});

test('config: a bad value names the variable', () => {
  const cases: Record<string, string>[] = [
    { PORT: 'abc' },
    { PORT: '70000' },
    { POSTLINE_DELIVERY: 'pigeon' },
    { POSTLINE_DELIVERY: 'relay' },
    { POSTLINE_BASE_URL: 'not a url' },
    { POSTLINE_DNS_SERVERS: 'dns.example:53' },
    { POSTLINE_WEBHOOK_ALLOW_PRIVATE: 'maybe' },
    { DATABASE_URL: 'mysql://x' },
    { POSTLINE_DELIVERY_CONCURRENCY: '0' },
    { POSTLINE_MX_CONNECTIONS_PER_HOST: 'many' },
  ];
  for (const env of cases) {
    const name = Object.keys(env)[0] === 'POSTLINE_DELIVERY' && env.POSTLINE_DELIVERY === 'relay' ? 'POSTLINE_SMTP_RELAY' : Object.keys(env)[0];
    assert.throws(() => loadConfig({ POSTLINE_DATA_DIR: dir(), ...env }), (e: unknown) => e instanceof ConfigError && e.variable === name && e.message.startsWith(name));
  }
});

test('config: DNS servers accept ip:port lists', () => {
  const c = loadConfig({ POSTLINE_DATA_DIR: dir(), POSTLINE_DNS_SERVERS: '127.0.0.1:5353, 10.0.0.1' });
  assert.deepEqual(c.dnsServers, ['127.0.0.1:5353', '10.0.0.1']);
});
