import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { countAccounts } from './db/queries/accounts.js';
import { systemClock } from './clock.js';
import { startupWarnings, type Config, type Role } from './config.js';
import { loggerOptions } from './logging.js';
import { openDatabase } from './db/open.js';
import { createMailDns } from './mail/dns.js';
import { checkSourcesAtStart } from './delivery/sources/check-at-start.js';
import { saveCompileCache } from './compile-cache.js';
import { heapSettingWarning, workerHeapFacts } from './worker-heap.js';

/**
 * `postline start`: opens the database (embedded unless DATABASE_URL), migrates, and runs
 * the API, the workers, or both. SIGINT/SIGTERM close the listener, let the workers finish
 * their current step, then stop the embedded PostgreSQL, so no postgres process is left.
 *
 * Each role loads only its own modules (imported when the role starts them): a worker never
 * loads Fastify, the routes, the OpenAPI documents or the inbound and submission listeners,
 * and an API process never loads the delivery engine and the background loops. Loading all
 * of them cost a worker ~0.6 s of CPU at every start (docs/architecture.md#processes-and-roles).
 */
export async function startServer(config: Config, role: Role): Promise<void> {
  const log = pino(loggerOptions(config.logLevel, ['*.key', '*.password', '*.secret']));
  for (const warning of startupWarnings(config)) log.warn(warning);
  const heapWarning = role === 'worker' ? heapSettingWarning(config.workerSemiSpaceMb, process.execArgv, process.env) : null;
  if (heapWarning) log.warn(heapWarning);
  const db = await openDatabase(config, { owner: true, log: (m) => log.info(m) });
  const clock = systemClock;
  // The first-start keys go to exactly one place: a process that is the whole deployment (the
  // embedded PostgreSQL, whose data dir one process owns, or role `all`) prints them; `api`
  // and `worker` processes on a shared DATABASE_URL, several of which may start at once,
  // create nothing, and `postline init` prints them (docs/deploy.md, "First start").
  if (config.databaseUrl === undefined || role === 'all') {
    // Creating the first account (keys, the owner's sign-in link) is loaded only when there is none.
    if ((await countAccounts(db.pool)) === 0) {
      const { bootstrapDefaultAccount } = await import('./bootstrap.js');
      const banner = await bootstrapDefaultAccount(db.pool, config);
      if (banner) process.stdout.write(banner + '\n');
    }
  } else if ((await countAccounts(db.pool)) === 0) {
    log.warn('no account yet: run `postline init` once (same DATABASE_URL) to create the first account and print its keys');
  }
  // Forward-confirmed reverse DNS of the source addresses: warned about, never refused.
  await checkSourcesAtStart({ pool: db.pool, dns: createMailDns({ servers: config.dnsServers }), identity: config.deliveryPolicy.identity, now: clock.now(), log })
    .catch((err: unknown) => log.warn({ err }, 'could not check the DNS of the source addresses'));

  const app = role === 'worker' ? null : await (await import('./http/app.js')).buildApp({ config, pool: db.pool, relaxedPool: db.relaxedPool, clock });
  if (app) {
    await app.listen({ port: config.port, host: config.host });
  }
  // The inbound MX for bounce domains and fbl@ runs with the API: both face the internet.
  const inbound = role === 'worker' ? null : await (await import('./inbound/smtp-listener.js')).startSmtpListener({ config, pool: db.pool, clock, log });
  // SMTP submission is another door to the send API, so it runs where the API does.
  const submission = role === 'worker' ? null : await (await import('./submission/listener.js')).startSubmissionListeners({ config, pool: db.pool, relaxedPool: db.relaxedPool, clock, log });
  const workers = role === 'api' ? null : await (await import('./workers/index.js')).startWorkers({ config, pool: db.pool, clock, log });
  // PORT=0 asks for any free port: say which one was given (the base URL still names port 0).
  const port = app ? (app.server.address() as AddressInfo).port : undefined;
  const heap = role === 'worker' ? workerHeapFacts(config.workerSemiSpaceMb) : undefined;
  log.info({ role, port, smtpPort: inbound?.port, submissionPort: submission?.port, submissionsPort: submission?.tlsPort, heap }, 'postline started');
  const listening = port !== undefined && port !== config.port ? ` (listening on port ${port})` : '';
  saveCompileCache();
  process.stdout.write(`postline ready (role ${role})${app ? ` on ${config.baseUrl}${listening}` : ''}\n`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    try {
      await app?.close();
      await inbound?.close();
      await submission?.close();
      await workers?.stop();
      await db.close();
    } finally {
      process.exit(0);
    }
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
}
