import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../src/clock.js';
import { bootApp, createTestAccount, type TestAccount, type TestApp } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';

export interface SdkServer extends TestApp {
  /** http://127.0.0.1:<port>, the SDK's baseUrl. */
  baseUrl: string;
  acme: TestAccount;
}

/** A real Postline listening on loopback (its own database), with an account whose domain acme.test is verified. */
export async function startSdkServer(opts: { clock?: Clock; env?: Record<string, string>; setup?: (app: FastifyInstance) => void } = {}): Promise<SdkServer> {
  const t = await bootApp(opts);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const acme = await createTestAccount(t.pool, 'Acme');
  await createVerifiedDomain(t.pool, acme.accountId, 'acme.test', t.config.secret);
  return { ...t, acme, baseUrl: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` };
}
