import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { notifySoon } from '../../db/notify.js';
import type { Pool } from '../../db/pool.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import { SharedLookups } from '../../lib/shared-lookups.js';
import { findSendingDomain, type SendingDomain } from '../domains/domains.js';
import type { KeyMode } from '../keys/api-keys.js';
import { RequestWrites } from '../request-writes.js';
import { SuppressionLookups } from '../suppression.js';
import { TrackingLinks } from '../tracking/links.js';
import type { SendRequest } from './send-input.js';
import { sendBatch, type BatchItemResult } from './batch-sends.js';
import { sendEmail, type SendContext, type SendResult } from './sending.js';

/** Who sends: the account behind the API key (or SMTP login) and the key's mode. */
export interface Sender {
  accountId: string;
  mode: KeyMode;
  monthlyQuota: number | null;
}

const DOMAIN_CACHE_MS = 10_000;
const DOMAIN_CACHE_ENTRIES = 10_000;

/**
 * The one way a message is accepted, whichever door it came through (POST /api/v1/emails,
 * its batch form, SMTP submission): validation, the verified sender domain, rendering, the
 * suppression list, the quota, then the rows and `sent` events written and the workers woken.
 * One instance per process holds what makes concurrent accepts cheap: a group commit for the
 * inserts, a short-lived cache of verified domains and batched suppression lookups.
 */
export class SendPipeline {
  private readonly links: TrackingLinks;
  private readonly writes: RequestWrites;
  private readonly suppression: SuppressionLookups;
  // Verified domains change rarely; caching the positive answer for a few seconds saves a
  // query per send. A domain deleted meanwhile stops being accepted within DOMAIN_CACHE_MS
  // (of the injected clock, so tests move past it).
  private readonly domains = new BoundedMap<string, { domain: SendingDomain; at: number }>(DOMAIN_CACHE_ENTRIES);
  // The sends of a burst that find no fresh entry share one lookup. Each asking on its own put
  // up to a pool's worth of identical queries in flight every DOMAIN_CACHE_MS under load, so the
  // pool opened connections (a backend started and a SCRAM exchange each) that then sat idle
  // until it closed them again (docs/decisions/0059-accept-cpu-per-request.md).
  private readonly domainLookups = new SharedLookups<string, SendingDomain | null>();

  /**
   * `writes` is the process's group commit of request writes (domain/request-writes.ts), which
   * the rate-limit counts share; without it the pipeline has one of its own.
   */
  constructor(private readonly deps: { pool: Pool; config: Config; clock: Clock; writes?: RequestWrites }) {
    this.links = new TrackingLinks(deps.config);
    // Concurrent accepts are written together: one statement and one commit per batch instead
    // of one per request (bench/send-api), the suppression check and the workers' wake-up
    // included (bench/accept), and the rate counts of requests arriving meanwhile with them.
    // Each caller still hears back only after its commit.
    this.writes = deps.writes ?? new RequestWrites({ pool: deps.pool });
    this.suppression = new SuppressionLookups(deps.pool);
  }

  /**
   * One message. Test keys: every check, nothing stored (`sandbox: true`). `idempotency` is the
   * claim the request runs under, if any (an Idempotency-Key, a submitted Message-ID).
   */
  async send(sender: Sender, req: SendRequest, idempotency?: SendContext['idempotency']): Promise<SendResult> {
    const stored = { byGroupCommit: false };
    const result = await sendEmail(this.context(sender, idempotency, stored), req);
    // The group commit's statement woke the workers itself; a send stored alone pokes them now.
    if (!result.sandbox && !stored.byGroupCommit) this.wakeWorkers();
    return result;
  }

  /** Up to SEND_LIMITS.batchSize messages, each answered on its own, the accepted ones stored together. */
  async sendBatch(sender: Sender, reqs: SendRequest[], idempotency?: SendContext['idempotency']): Promise<BatchItemResult[]> {
    const results = await sendBatch(this.context(sender, idempotency, { byGroupCommit: false }), reqs);
    if (results.some((r) => !('error' in r) && !r.sandbox)) this.wakeWorkers();
    return results;
  }

  private context(sender: Sender, idempotency: SendContext['idempotency'], stored: { byGroupCommit: boolean }): SendContext {
    return {
      idempotency,
      db: this.deps.pool,
      config: this.deps.config,
      links: this.links,
      accountId: sender.accountId,
      mode: sender.mode,
      monthlyQuota: sender.monthlyQuota,
      now: this.deps.clock.now(),
      findDomain: (accountId, fromEmail) => this.findDomain(accountId, fromEmail),
      storeAccepted: async (rows, keys, events) => {
        const suppressed = await this.writes.storeSend(rows, keys, events);
        stored.byGroupCommit = true;
        return suppressed;
      },
      suppressedAmong: (accountId, emails) => this.suppression.suppressedAmong(accountId, emails),
    };
  }

  private async findDomain(accountId: string, fromEmail: string): Promise<SendingDomain | null> {
    const key = `${accountId} ${fromEmail.slice(fromEmail.lastIndexOf('@') + 1).toLowerCase()}`;
    const hit = this.domains.get(key);
    const age = hit ? this.deps.clock.now().getTime() - hit.at : -1;
    if (hit && age >= 0 && age < DOMAIN_CACHE_MS) return hit.domain;
    return this.domainLookups.run(key, async () => {
      const domain = await findSendingDomain(this.deps.pool, accountId, fromEmail);
      if (domain) this.domains.set(key, { domain, at: this.deps.clock.now().getTime() });
      else this.domains.delete(key);
      return domain;
    });
  }

  private wakeWorkers(): void {
    notifySoon(this.deps.pool, 'postline_messages');
    notifySoon(this.deps.pool, 'postline_events');
  }
}
