/**
 * Sending identity in the delivery policy (docs/sending-identity.md): the `sources` mail
 * leaves from — each a local address with the EHLO name its reverse DNS carries, and an
 * optional warm-up plan — and the `pools` of sources each stream and account sends through.
 *
 * ```json
 * "sources": { "tx1": { "address": "203.0.113.10", "ehlo": "mta1.example.com" },
 *              "new1": { "address": "203.0.113.11", "ehlo": "mta3.example.com",
 *                        "warmup": { "start": "2026-12-01", "daily": [50, 100, 200] }, "overflow": "spill" } },
 * "pools": { "transactional": ["tx1", "new1"], "broadcast": ["bulk1"] }
 * ```
 *
 * Without `sources` nothing changes: the kernel picks the address, as before. With them,
 * both stream pools must exist, so no message is left without a way out.
 */
import { isIP } from 'node:net';

/** The two streams of mail: API and automation mail, and campaign mail. */
export const STREAMS = ['transactional', 'broadcast'] as const;
export type Stream = (typeof STREAMS)[number];

export interface WarmupPlan {
  /** The UTC day (YYYY-MM-DD) the source sends its first messages: day 1 of `daily`. */
  start: string;
  /** Most messages per provider on day 1, 2, …; no cap after the last. */
  daily: number[];
}

export interface Source {
  name: string;
  address: string;
  ehlo: string;
  warmup: WarmupPlan | null;
  /** What a message does when this source's warm-up cap is reached: wait for the next day, or leave from a warmed source of its pool. */
  overflow: 'wait' | 'spill';
}

export interface SendingIdentity {
  /** In the order the policy lists them. Empty: no sources, mail leaves as before. */
  sources: Source[];
  /** Pool name → source names, in order. */
  pools: Record<string, string[]>;
}

export const NO_SENDING_IDENTITY: SendingIdentity = { sources: [], pools: {} };

/** An error naming the policy key at fault, as the rest of the delivery policy's. */
export class SendingIdentityError extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`POSTLINE_DELIVERY_POLICY: ${key}: ${reason}`);
  }
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/i;
/** A warm-up longer than a year is a typo. */
const MAX_WARMUP_DAYS = 366;

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function isHostName(name: string): boolean {
  const labels = name.split('.');
  return name.length <= 253 && labels.length >= 2 && labels.every((l) => LABEL.test(l));
}

export function isCalendarDay(day: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return false;
  const d = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === day;
}

function readWarmup(raw: unknown, key: string): WarmupPlan {
  if (!isObject(raw)) throw new SendingIdentityError(key, 'must be an object with start and daily');
  for (const k of Object.keys(raw)) if (k !== 'start' && k !== 'daily') throw new SendingIdentityError(`${key}.${k}`, 'is not a known key');
  if (typeof raw.start !== 'string' || !isCalendarDay(raw.start)) {
    throw new SendingIdentityError(`${key}.start`, `must be a UTC day as YYYY-MM-DD, got ${JSON.stringify(raw.start)}`);
  }
  const daily = raw.daily;
  if (!Array.isArray(daily) || daily.length === 0 || daily.length > MAX_WARMUP_DAYS) {
    throw new SendingIdentityError(`${key}.daily`, `must be an array of 1 to ${MAX_WARMUP_DAYS} daily caps`);
  }
  daily.forEach((n, i) => {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 100_000_000) {
      throw new SendingIdentityError(`${key}.daily[${i}]`, `must be a positive integer, got ${JSON.stringify(n)}`);
    }
  });
  return { start: raw.start, daily: daily as number[] };
}

const SOURCE_KEYS = new Set(['address', 'ehlo', 'warmup', 'overflow']);

function readSource(name: string, raw: unknown, key: string): Source {
  if (!NAME.test(name)) throw new SendingIdentityError(key, 'a source name must be lower-case letters, digits, - and _');
  if (!isObject(raw)) throw new SendingIdentityError(key, 'must be an object with address and ehlo');
  for (const k of Object.keys(raw)) if (!SOURCE_KEYS.has(k)) throw new SendingIdentityError(`${key}.${k}`, 'is not a known key');
  if (typeof raw.address !== 'string' || isIP(raw.address) === 0) {
    throw new SendingIdentityError(`${key}.address`, `must be an IPv4 or IPv6 address, got ${JSON.stringify(raw.address)}`);
  }
  if (typeof raw.ehlo !== 'string' || !isHostName(raw.ehlo.replace(/\.$/, ''))) {
    throw new SendingIdentityError(`${key}.ehlo`, `must be a fully qualified host name, got ${JSON.stringify(raw.ehlo)}`);
  }
  const overflow = raw.overflow ?? 'wait';
  if (overflow !== 'wait' && overflow !== 'spill') throw new SendingIdentityError(`${key}.overflow`, `must be "wait" or "spill", got ${JSON.stringify(overflow)}`);
  if ('overflow' in raw && !('warmup' in raw)) throw new SendingIdentityError(`${key}.overflow`, 'applies to a source with a warmup plan only');
  return {
    name,
    address: raw.address,
    ehlo: raw.ehlo.toLowerCase().replace(/\.$/, ''),
    warmup: 'warmup' in raw ? readWarmup(raw.warmup, `${key}.warmup`) : null,
    overflow,
  };
}

/**
 * The `sources` and `pools` keys of a delivery policy document. Throws SendingIdentityError
 * naming the key at fault.
 */
export function parseSendingIdentity(doc: { sources?: unknown; pools?: unknown }): SendingIdentity {
  if (doc.sources === undefined) {
    if (doc.pools !== undefined) throw new SendingIdentityError('pools', 'needs sources to pool');
    return NO_SENDING_IDENTITY;
  }
  if (!isObject(doc.sources)) throw new SendingIdentityError('sources', 'must be an object of named sources');
  const sources = Object.entries(doc.sources).map(([name, raw]) => readSource(name, raw, `sources.${name}`));
  if (sources.length === 0) throw new SendingIdentityError('sources', 'must name at least one source (or be left out)');
  const byAddress = new Map<string, string>();
  for (const s of sources) {
    const other = byAddress.get(s.address);
    if (other) throw new SendingIdentityError(`sources.${s.name}.address`, `${s.address} is already the address of "${other}"`);
    byAddress.set(s.address, s.name);
  }

  if (!isObject(doc.pools)) throw new SendingIdentityError('pools', 'must be an object of pools (transactional and broadcast at least) when sources are given');
  const names = new Set(sources.map((s) => s.name));
  const pools: Record<string, string[]> = {};
  for (const [pool, members] of Object.entries(doc.pools)) {
    const key = `pools.${pool}`;
    if (!NAME.test(pool)) throw new SendingIdentityError(key, 'a pool name must be lower-case letters, digits, - and _');
    if (pool === 'default') throw new SendingIdentityError(key, '"default" is reserved: it means "the stream\'s own pool"');
    if (!Array.isArray(members) || members.length === 0) throw new SendingIdentityError(key, 'must be a non-empty array of source names');
    members.forEach((m, i) => {
      if (typeof m !== 'string' || !names.has(m)) throw new SendingIdentityError(`${key}[${i}]`, `${JSON.stringify(m)} is not a source`);
    });
    if (new Set(members).size !== members.length) throw new SendingIdentityError(key, 'names a source twice');
    pools[pool] = members as string[];
  }
  for (const stream of STREAMS) {
    if (!pools[stream]) throw new SendingIdentityError(`pools.${stream}`, `is required: ${stream} mail needs a pool when sources are given`);
  }
  return { sources, pools };
}

export function sourceNamed(identity: SendingIdentity, name: string): Source | undefined {
  return identity.sources.find((s) => s.name === name);
}

/** The pool a message leaves through: the account's own for its stream, else the stream's. A pool removed from the policy falls back too. */
export function poolFor(identity: SendingIdentity, stream: Stream, accountPool: string | null): string {
  return accountPool && identity.pools[accountPool] ? accountPool : stream;
}
