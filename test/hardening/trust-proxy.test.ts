import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { ConfigError, loadConfig } from '../../src/config.js';
import { bootApp } from '../helpers/app.js';

/**
 * The client address (sign-in throttling, logs) comes from X-Forwarded-For only when the TCP
 * peer is a proxy named in POSTLINE_TRUST_PROXY (docs/deploy.md); a client cannot pick its own.
 */
const ipRoute = (app: FastifyInstance) => {
  app.get('/_ip', async (request) => ({ ip: request.ip }));
};
const ipOf = async (app: FastifyInstance, remoteAddress: string, xff?: string) =>
  (await app.inject({ method: 'GET', url: '/_ip', remoteAddress, headers: xff ? { 'x-forwarded-for': xff } : {} })).json().ip;

test('trust proxy: unset, X-Forwarded-For is ignored', async () => {
  const { app } = await bootApp({ setup: ipRoute });
  assert.equal(await ipOf(app, '127.0.0.1', '198.51.100.7'), '127.0.0.1');
});

test('trust proxy: the listed proxy\'s X-Forwarded-For gives the client address; another peer\'s does not', async () => {
  const { app } = await bootApp({ env: { POSTLINE_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8' }, setup: ipRoute });
  assert.equal(await ipOf(app, '127.0.0.1', '198.51.100.7'), '198.51.100.7');
  assert.equal(await ipOf(app, '10.1.2.3', '198.51.100.8'), '198.51.100.8');
  // A client behind the proxy that sends its own header: the proxy's view (the last hop) wins.
  assert.equal(await ipOf(app, '127.0.0.1', '203.0.113.9, 198.51.100.7'), '198.51.100.7');
  assert.equal(await ipOf(app, '192.0.2.44', '198.51.100.7'), '192.0.2.44');
});

test('trust proxy: a value that is not an address or CIDR stops start-up naming the variable', () => {
  assert.deepEqual(loadConfig({ POSTLINE_DATA_DIR: '/tmp/postline-cfg-proxy', POSTLINE_TRUST_PROXY: '' }).trustProxy, []);
  assert.deepEqual(loadConfig({ POSTLINE_DATA_DIR: '/tmp/postline-cfg-proxy', POSTLINE_TRUST_PROXY: '::1,fd00::/8' }).trustProxy, ['::1', 'fd00::/8']);
  assert.throws(() => loadConfig({ POSTLINE_DATA_DIR: '/tmp/postline-cfg-proxy', POSTLINE_TRUST_PROXY: 'proxy.internal' }),
    (e) => e instanceof ConfigError && e.variable === 'POSTLINE_TRUST_PROXY');
  assert.throws(() => loadConfig({ POSTLINE_DATA_DIR: '/tmp/postline-cfg-proxy', POSTLINE_IDEMPOTENCY_LEASE_SECONDS: '0' }),
    (e) => e instanceof ConfigError && e.variable === 'POSTLINE_IDEMPOTENCY_LEASE_SECONDS');
  assert.equal(loadConfig({ POSTLINE_DATA_DIR: '/tmp/postline-cfg-proxy', POSTLINE_IDEMPOTENCY_LEASE_SECONDS: '3600' }).idempotencyLeaseMs, 3_600_000);
  assert.throws(() => loadConfig({ POSTLINE_DATA_DIR: '/tmp/postline-cfg-proxy', POSTLINE_IDEMPOTENCY_LEASE_SECONDS: '3601' }), ConfigError);
});
