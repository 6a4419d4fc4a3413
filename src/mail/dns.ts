/**
 * DNS for mail: MX resolution (RFC 5321 §5.1, RFC 7505 null MX) with a TTL cache, and plain
 * TXT / CNAME / address lookups. Every lookup goes through one `node:dns/promises` Resolver,
 * which is a parameter: production points it at `config.dnsServers` (or the system), tests at
 * the zone served by test/helpers/dns-server.ts.
 *
 * Failures a caller must act on are returned as data (`MxLookup`), not thrown, so delivery
 * can classify them (permanent: nxdomain, no_mx, null_mx; transient: temp).
 */
import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DNSResolver } from 'mailauth';
import { systemClock, type Clock } from '../clock.js';
import { BoundedMap } from '../lib/bounded-map.js';
import { SharedLookups } from '../lib/shared-lookups.js';

/** The subset of node's Resolver we use, so a test may hand in a stub. */
export type DnsResolver = Pick<Resolver, 'resolveMx' | 'resolve4' | 'resolve6' | 'resolveTxt' | 'resolveCname' | 'reverse'>;

export interface MxHost {
  exchange: string;
  priority: number;
  /** IPv4 first, then IPv6: connect to these, use `exchange` for EHLO/SNI and logs. */
  addresses: string[];
}

export type MxFailureKind = 'nxdomain' | 'no_mx' | 'null_mx' | 'temp';

export type MxLookup =
  | { ok: true; domain: string; hosts: MxHost[]; implicit: boolean; ttlSeconds: number }
  | { ok: false; domain: string; kind: MxFailureKind; message: string };

export type MxFailure = Extract<MxLookup, { ok: false }>;

/** A lookup failure that is neither "no such name" nor "no such record": try again later. */
export class DnsTempError extends Error {
  readonly code: string;
  constructor(name: string, rrtype: string, code: string) {
    super(`DNS ${rrtype} lookup for ${name} failed temporarily (${code})`);
    this.name = 'DnsTempError';
    this.code = code;
  }
}

/** c-ares answers NXDOMAIN with ENOTFOUND and an empty answer (NODATA) with ENODATA. */
function dnsCode(err: unknown): string {
  return (err as NodeJS.ErrnoException)?.code ?? 'EUNKNOWN';
}
const isNxdomain = (err: unknown) => dnsCode(err) === 'ENOTFOUND';
const isNodata = (err: unknown) => dnsCode(err) === 'ENODATA';

/** A Resolver pointed at `servers` ("127.0.0.1:5353", "[::1]:53"), or the system's when unset. */
export function createResolver(servers?: string[], opts: { timeoutMs?: number; tries?: number } = {}): Resolver {
  const resolver = new Resolver({ timeout: opts.timeoutMs ?? 3000, tries: opts.tries ?? 2 });
  if (servers && servers.length > 0) resolver.setServers(servers);
  return resolver;
}

/**
 * MX answers cached until their TTL runs out, judged by an injectable clock. Bounded: the
 * oldest entry goes first when full (a Map iterates in insertion order).
 */
export class MxCache {
  private readonly entries: BoundedMap<string, { value: MxLookup; expiresAt: number }>;
  constructor(
    private readonly clock: Clock = systemClock,
    maxEntries = 10_000,
  ) {
    this.entries = new BoundedMap(maxEntries);
  }

  get(domain: string): MxLookup | undefined {
    const hit = this.entries.get(domain);
    if (!hit) return undefined;
    if (hit.expiresAt <= this.clock.now().getTime()) {
      this.entries.delete(domain);
      return undefined;
    }
    return hit.value;
  }

  set(domain: string, value: MxLookup, ttlSeconds: number): void {
    if (ttlSeconds <= 0) return;
    this.entries.set(domain, { value, expiresAt: this.clock.now().getTime() + ttlSeconds * 1000 });
  }

  clear(): void {
    this.entries.clear();
  }
}

export interface HostAddresses {
  addresses: string[];
  /** Smallest TTL among the answers; undefined when there were none. */
  ttlSeconds: number | undefined;
  /** Set when a family failed for a reason other than NXDOMAIN/NODATA. */
  tempError?: string;
  nxdomain: boolean;
}

export interface MailDnsOptions {
  resolver?: DnsResolver;
  /** Used only when no resolver is given: e.g. config.dnsServers. */
  servers?: string[];
  clock?: Clock;
  cache?: MxCache;
  /** Cache bounds for MX answers, seconds. */
  minTtlSeconds?: number;
  maxTtlSeconds?: number;
  /** How long "this domain has no mail host" is remembered. Temporary failures never are. */
  negativeTtlSeconds?: number;
}

export interface MailDns {
  readonly resolver: DnsResolver;
  resolveMx(domain: string): Promise<MxLookup>;
  /** TXT records, each record's character-strings joined; null when the name or record is absent. Throws DnsTempError. */
  resolveTxt(name: string): Promise<string[] | null>;
  /** CNAME targets (lower-cased, no trailing dot); null when absent. Throws DnsTempError. */
  resolveCname(name: string): Promise<string[] | null>;
  resolveHostAddresses(host: string): Promise<HostAddresses>;
  /** PTR names of an IP address (lower-cased, no trailing dot); null when none. Throws DnsTempError. */
  reverse(address: string): Promise<string[] | null>;
}

const DEFAULT_TTL_SECONDS = 300;

export function createMailDns(opts: MailDnsOptions = {}): MailDns {
  const resolver = opts.resolver ?? createResolver(opts.servers);
  const clock = opts.clock ?? systemClock;
  const cache = opts.cache ?? new MxCache(clock);
  const minTtl = opts.minTtlSeconds ?? 30;
  const maxTtl = opts.maxTtlSeconds ?? 3600;
  const negativeTtl = opts.negativeTtlSeconds ?? 60;
  /** MX lookups under way, by domain: callers meanwhile wait for the same answer. */
  const lookups = new SharedLookups<string, MxLookup>();
  const clampTtl = (ttl: number | undefined) => Math.min(maxTtl, Math.max(minTtl, ttl ?? DEFAULT_TTL_SECONDS));

  async function resolveHostAddresses(host: string): Promise<HostAddresses> {
    if (isIP(host)) return { addresses: [host], ttlSeconds: undefined, nxdomain: false };
    const [v4, v6] = await Promise.allSettled([
      resolver.resolve4(host, { ttl: true }),
      resolver.resolve6(host, { ttl: true }),
    ]);
    const answers = [v4, v6].flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    const failures = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    const temp = failures.find((e) => !isNxdomain(e) && !isNodata(e));
    return {
      addresses: answers.map((a) => a.address),
      ttlSeconds: answers.length ? Math.min(...answers.map((a) => a.ttl)) : undefined,
      tempError: temp ? dnsCode(temp) : undefined,
      nxdomain: failures.length === 2 && failures.every(isNxdomain),
    };
  }

  /**
   * Node's resolver does not report the TTL of MX records, only of A/AAAA answers. The cache
   * lifetime is therefore the smallest TTL of the addresses we resolved for the MX hosts,
   * clamped to [minTtl, maxTtl]. Those addresses are what delivery connects to, so they are
   * the part whose staleness matters.
   */
  async function lookupMx(domain: string): Promise<MxLookup> {
    let records: { exchange: string; priority: number }[];
    try {
      records = await resolver.resolveMx(domain);
    } catch (err) {
      if (isNxdomain(err)) return { ok: false, domain, kind: 'nxdomain', message: `${domain}: no such domain (NXDOMAIN)` };
      if (!isNodata(err)) return { ok: false, domain, kind: 'temp', message: `${domain}: MX lookup failed (${dnsCode(err)})` };
      records = [];
    }
    // RFC 7505: a single MX with an empty exchange (".") says the domain takes no mail.
    if (records.length === 1 && normalizeName(records[0].exchange) === '') {
      return { ok: false, domain, kind: 'null_mx', message: `${domain}: domain accepts no mail (null MX, RFC 7505)` };
    }
    const mx = records.filter((r) => normalizeName(r.exchange) !== '');
    if (mx.length === 0) return implicitMx(domain);

    // Lowest preference first. Equal preferences keep a stable (name) order rather than the
    // RFC's suggested shuffle, so one worker keeps reusing connections to the same host.
    mx.sort((a, b) => a.priority - b.priority || a.exchange.localeCompare(b.exchange));
    const resolved = await Promise.all(mx.map((r) => resolveHostAddresses(normalizeName(r.exchange))));
    const hosts: MxHost[] = [];
    const ttls: number[] = [];
    mx.forEach((r, i) => {
      if (resolved[i].addresses.length === 0) return;
      hosts.push({ exchange: normalizeName(r.exchange), priority: r.priority, addresses: resolved[i].addresses });
      if (resolved[i].ttlSeconds !== undefined) ttls.push(resolved[i].ttlSeconds!);
    });
    if (hosts.length === 0) {
      // MX names that do not resolve are usually a broken or half-migrated zone: retry later.
      return { ok: false, domain, kind: 'temp', message: `${domain}: no MX host has an address (${mx.map((r) => r.exchange).join(', ')})` };
    }
    return { ok: true, domain, hosts, implicit: false, ttlSeconds: clampTtl(ttls.length ? Math.min(...ttls) : undefined) };
  }

  /** RFC 5321 §5.1: without MX records the domain itself is the mail host (implicit MX). */
  async function implicitMx(domain: string): Promise<MxLookup> {
    const a = await resolveHostAddresses(domain);
    if (a.addresses.length > 0) {
      return { ok: true, domain, hosts: [{ exchange: domain, priority: 0, addresses: a.addresses }], implicit: true, ttlSeconds: clampTtl(a.ttlSeconds) };
    }
    if (a.tempError) return { ok: false, domain, kind: 'temp', message: `${domain}: address lookup failed (${a.tempError})` };
    if (a.nxdomain) return { ok: false, domain, kind: 'nxdomain', message: `${domain}: no such domain (NXDOMAIN)` };
    return { ok: false, domain, kind: 'no_mx', message: `${domain}: no MX and no A/AAAA record` };
  }

  return {
    resolver,
    resolveHostAddresses,

    async resolveMx(domain) {
      const key = normalizeName(domain);
      const cached = cache.get(key);
      if (cached) return cached;
      // Concurrent calls for a domain share one lookup: a claim brings a batch of messages to
      // a domain not cached yet (every worker's first claim), and each asked the resolver on
      // its own, hundreds of MX and A queries for one answer (docs/decisions/0053-*.md).
      return lookups.run(key, async () => {
        const result = await lookupMx(key);
        if (result.ok) cache.set(key, result, result.ttlSeconds);
        else if (result.kind !== 'temp') cache.set(key, result, negativeTtl);
        return result;
      });
    },

    async resolveTxt(name) {
      try {
        return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
      } catch (err) {
        if (isNxdomain(err) || isNodata(err)) return null;
        throw new DnsTempError(name, 'TXT', dnsCode(err));
      }
    },

    async reverse(address) {
      try {
        return (await resolver.reverse(address)).map(normalizeName);
      } catch (err) {
        if (isNxdomain(err) || isNodata(err)) return null;
        throw new DnsTempError(address, 'PTR', dnsCode(err));
      }
    },

    async resolveCname(name) {
      try {
        return (await resolver.resolveCname(name)).map(normalizeName);
      } catch (err) {
        if (isNxdomain(err) || isNodata(err)) return null;
        throw new DnsTempError(name, 'CNAME', dnsCode(err));
      }
    },
  };
}

/** Lower case, no trailing dot: the form names are compared and cached in. */
export function normalizeName(name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '');
}

/**
 * The resolver function mailauth accepts (`authenticate`, `dkimVerify`, SPF): same answers
 * as node's `dns.resolve(name, rrtype)`, errors with their DNS codes (mailauth maps
 * ENOTFOUND/ENODATA to "no key", anything else to temperror).
 */
export function toMailauthResolver(resolver: Pick<Resolver, 'resolve'>): DNSResolver {
  return async (name, rrtype) => (await resolver.resolve(name, rrtype)) as unknown as string[] | string[][];
}
