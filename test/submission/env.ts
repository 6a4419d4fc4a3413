import { after } from 'node:test';
import pino from 'pino';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import { startSubmissionListeners, type SubmissionListeners } from '../../src/submission/listener.js';
import { startMailEnv, type MailEnv } from '../helpers/mail-env.js';
import { makeTestCertificate, type TestCertificate } from '../helpers/tls-cert.js';

export interface SubmissionEnv extends MailEnv {
  cert: TestCertificate;
  listeners: SubmissionListeners;
  /** Another pair of listeners on the same app and database, with settings changed. */
  startListeners(change: (c: Config) => Config, clock?: Clock): Promise<SubmissionListeners>;
}

/**
 * The mail environment (app, database, verified acme.test, loopback DNS and MX) plus SMTP
 * submission on both ports of 127.0.0.1 with a certificate made for the test.
 */
export async function startSubmissionEnv(opts: { env?: Record<string, string> } = {}): Promise<SubmissionEnv> {
  const env = await startMailEnv({ env: opts.env });
  const cert = makeTestCertificate();
  const startListeners = async (change: (c: Config) => Config, clock: Clock = env.clock) => {
    const config = change({
      ...env.config,
      host: '127.0.0.1',
      submission: { port: 0, tlsPort: 0, tlsCert: cert.certPath, tlsKey: cert.keyPath, allowInsecureAuth: false },
    });
    const listeners = await startSubmissionListeners({ config, pool: env.pool, clock, log: pino({ level: 'silent' }) });
    after(() => listeners.close());
    return listeners;
  };
  return { ...env, cert, listeners: await startListeners((c) => c), startListeners };
}
