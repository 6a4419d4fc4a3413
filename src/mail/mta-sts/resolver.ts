/**
 * The MTA-STS policy in force for a recipient domain (RFC 8461 §3 and §5): the `_mta-sts`
 * TXT record says whether there is one and its id; the policy itself is fetched over HTTPS
 * only when the id is new or the cached copy has outlived its max_age, so a busy domain costs
 * one fetch per max_age, not one per message. The cache is a store passed in (PostgreSQL in
 * production, shared by every worker and surviving restarts).
 *
 * §5.1: a cached, unexpired policy stays in force when the TXT record disappears or the
 * refresh fails; without one, a failed fetch means delivering as if the domain had no policy
 * (and reporting the failure). The TXT answer itself is remembered for `recheckSeconds` in
 * this process, so each message does not cost a DNS query.
 */
import { systemClock, type Clock } from '../../clock.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import { DnsTempError, type MailDns } from '../dns.js';
import { fetchStsPolicy, type StsFetchFailure, type StsFetchOptions, type StsFetchResult } from './fetch.js';
import { parseStsRecord, type StsPolicy } from './policy.js';
import { SharedLookups } from '../../lib/shared-lookups.js';

export interface CachedStsPolicy {
  domain: string;
  id: string;
  policy: StsPolicy;
  /** The policy file as fetched: TLS reports quote it (RFC 8460 `policy-string`). */
  text: string;
  fetchedAt: Date;
  expiresAt: Date;
}

export interface StsPolicyStore {
  get(domain: string): Promise<CachedStsPolicy | null>;
  put(entry: CachedStsPolicy): Promise<void>;
}

export type StsLookup =
  | { kind: 'none'; domain: string; reason: string }
  | { kind: 'policy'; domain: string; cached: CachedStsPolicy; refreshError?: { failure: StsFetchFailure; error: string } }
  /** A policy is published but could not be had, and none is cached: deliver as without one, report this. */
  | { kind: 'unavailable'; domain: string; failure: StsFetchFailure; error: string };

export interface StsResolverOptions {
  dns: Pick<MailDns, 'resolveTxt' | 'resolveHostAddresses'>;
  store: StsPolicyStore;
  clock?: Clock;
  /** How long this process trusts its last TXT answer for a domain. */
  recheckSeconds?: number;
  fetch?: Omit<StsFetchOptions, 'dns'>;
  /** Replaces the HTTPS fetch (never needed outside tests of this module). */
  fetchPolicy?: (domain: string) => Promise<StsFetchResult>;
}

export class StsPolicyResolver {
  private readonly clock: Clock;
  private readonly recheckMs: number;
  private readonly memo = new BoundedMap<string, { lookup: StsLookup; until: number }>(10_000);
  private readonly pending = new SharedLookups<string, StsLookup>();
  private readonly fetchPolicy: (domain: string) => Promise<StsFetchResult>;

  constructor(private readonly opts: StsResolverOptions) {
    this.clock = opts.clock ?? systemClock;
    this.recheckMs = (opts.recheckSeconds ?? 300) * 1000;
    this.fetchPolicy = opts.fetchPolicy ?? ((domain) => fetchStsPolicy(domain, { ...opts.fetch, dns: opts.dns }));
  }

  /** The policy for `domain` (lower-case A-label), fetched or cached. Concurrent calls share one lookup. */
  async policyFor(domain: string): Promise<StsLookup> {
    const now = this.clock.now().getTime();
    const memo = this.memo.get(domain);
    if (memo && memo.until > now) return memo.lookup;
    const lookup = await this.pending.run(domain, () => this.lookup(domain));
    this.remember(domain, lookup);
    return lookup;
  }

  private remember(domain: string, lookup: StsLookup): void {
    const now = this.clock.now().getTime();
    let until = now + this.recheckMs;
    if (lookup.kind === 'policy') until = Math.min(until, lookup.cached.expiresAt.getTime());
    this.memo.set(domain, { lookup, until });
  }

  private async lookup(domain: string): Promise<StsLookup> {
    const now = this.clock.now();
    const cached = await this.opts.store.get(domain);
    const live = cached && cached.expiresAt > now ? cached : null;

    let txt: string[] | null;
    try {
      txt = await this.opts.dns.resolveTxt(`_mta-sts.${domain}`);
    } catch (err) {
      if (!(err instanceof DnsTempError)) throw err;
      return live ? { kind: 'policy', domain, cached: live } : { kind: 'none', domain, reason: err.message };
    }
    const record = parseStsRecord(txt ?? []);
    if (!record.ok) {
      // §5.1: a policy already cached outlives its TXT record until its max_age.
      return live ? { kind: 'policy', domain, cached: live } : { kind: 'none', domain, reason: `_mta-sts.${domain}: ${record.error}` };
    }
    if (live && live.id === record.value.id) return { kind: 'policy', domain, cached: live };

    const fetched = await this.fetchPolicy(domain);
    if (!fetched.ok) {
      if (live) return { kind: 'policy', domain, cached: live, refreshError: { failure: fetched.failure, error: fetched.error } };
      return { kind: 'unavailable', domain, failure: fetched.failure, error: fetched.error };
    }
    const entry: CachedStsPolicy = {
      domain,
      id: record.value.id,
      policy: fetched.policy,
      text: fetched.text,
      fetchedAt: now,
      expiresAt: new Date(now.getTime() + fetched.policy.maxAgeSeconds * 1000),
    };
    await this.opts.store.put(entry);
    return { kind: 'policy', domain, cached: entry };
  }
}

/** A store in this process's memory: for a single process without a database, and tests. */
export class MemoryStsPolicyStore implements StsPolicyStore {
  private readonly entries = new Map<string, CachedStsPolicy>();
  async get(domain: string) {
    return this.entries.get(domain) ?? null;
  }
  async put(entry: CachedStsPolicy) {
    this.entries.set(entry.domain, entry);
  }
}
