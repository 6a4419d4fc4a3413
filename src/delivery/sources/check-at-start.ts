import type { Logger } from 'pino';
import type { Pool } from '../../db/pool.js';
import { replaceSourceChecks } from '../../db/queries/source-checks.js';
import type { MailDns } from '../../mail/dns.js';
import { checkSourceDns, type SourceCheck } from '../../mail/fcrdns.js';
import type { SendingIdentity } from '../../sending-identity.js';

/**
 * The start-up check of every source's forward-confirmed reverse DNS: each mismatch is a
 * warning in the log, and the results are kept for the dashboard's deliverability page
 * (GET /api/v1/deliverability/sources). Never stops the start: a DNS failure is a warning too.
 */
export async function checkSourcesAtStart(deps: { pool: Pool; dns: Pick<MailDns, 'resolveHostAddresses' | 'reverse'>; identity: SendingIdentity; now: Date; log: Logger }): Promise<SourceCheck[]> {
  const checks = await Promise.all(deps.identity.sources.map((s) => checkSourceDns(deps.dns, s, deps.now)));
  for (const c of checks) {
    if (c.warning) deps.log.warn({ source: c.name, address: c.address, ehlo: c.ehlo, forward: c.forward, reverse: c.reverse }, c.warning);
  }
  await replaceSourceChecks(deps.pool, checks);
  return checks;
}
