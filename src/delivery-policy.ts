/**
 * The delivery policy: which provider a recipient's MX hosts belong to, and the limits and
 * reply rules each provider gets (docs/delivery-policy.md). Shipped defaults cover the big
 * mailbox providers; POSTLINE_DELIVERY_POLICY names a JSON file whose `providers` replace the
 * shipped ones of the same name and add others, whose `default` block overrides the defaults'
 * and whose `relay` block shapes POSTLINE_DELIVERY=relay. A bad file stops start-up with a
 * message naming the key.
 */
import { readFileSync } from 'node:fs';
import { NO_SENDING_IDENTITY, parseSendingIdentity, SendingIdentityError, type SendingIdentity } from './sending-identity.js';

/** A reply rule: when a reply matches, the provider is suspended for `suspendMs` and slowed. */
export interface ReplyRule {
  /** An enhanced status code (`4.7.28`) or words (`TSS04`, `too many connections`), case-insensitive. */
  match: string;
  suspendMs: number;
}

export interface Limits {
  maxConnections: number;
  /** null: no per-minute limit. */
  messagesPerMinute: number | null;
  messagesPerConnection: number;
  /** Relay only (a 24-hour quota); null elsewhere. */
  messagesPerDay: number | null;
}

export interface ProviderPolicy extends Limits {
  name: string;
  /** MX host globs (`*.google.com`); empty for `default` and `relay`. */
  mx: string[];
  onReply: ReplyRule[];
  greylistRetryMs: number;
  /** After a suspension the rate resumes at this fraction of the limits (multiplicative decrease). */
  resumeFactor: number;
  /** ...and climbs back by a tenth of the limits every `rampEveryMs` without a throttle (additive increase). */
  rampEveryMs: number;
}

export interface DeliveryPolicy {
  default: ProviderPolicy;
  relay: ProviderPolicy;
  providers: ProviderPolicy[];
  /** The `sources` and `pools` mail leaves from (./sources/identity.ts; docs/sending-identity.md). */
  identity: SendingIdentity;
}

export class PolicyError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`POSTLINE_DELIVERY_POLICY: ${key}: ${message}`);
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "10s", "5m", "1h", "250ms" → milliseconds; null when not a duration. */
export function parseDuration(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!m) return null;
  const ms = Number(m[1]) * UNITS[m[2]];
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : null;
}

/** Rules every provider gets besides its own: the generic ways receivers say "slow down". */
const GENERIC_RULES: ReplyRule[] = [
  { match: 'too many connections', suspendMs: 60_000 },
  { match: 'rate limit', suspendMs: 5 * 60_000 },
  { match: 'rate exceeded', suspendMs: 60_000 },
  { match: 'throttl', suspendMs: 60_000 },
];

const BASE = { messagesPerDay: null, greylistRetryMs: 5 * 60_000, resumeFactor: 0.5, rampEveryMs: 60_000 } as const;

/**
 * Shipped providers. No mailbox provider publishes per-IP numbers; their sender guidelines
 * (Google's, Yahoo's Sender Hub, Microsoft's SNDS/JMRP pages) say to ramp volume up gradually
 * and to back off on 4xx. The numbers are our conservative starting points for a warm IP
 * (docs/delivery-policy.md explains each); the reply rules are the providers' documented
 * throttle codes: Gmail 4.7.28 ("unusual rate"), Microsoft 4.7.650/4.7.651 ("rate limited
 * due to IP reputation"), Yahoo TSS04 ("temporarily deferred due to unexpected volume"),
 * iCloud 4.7.1 with "rate limit" wording.
 */
export const SHIPPED_POLICY: DeliveryPolicy = {
  default: { name: 'default', mx: [], maxConnections: 20, messagesPerMinute: null, messagesPerConnection: 100, onReply: [], ...BASE },
  relay: { name: 'relay', mx: [], maxConnections: 10, messagesPerMinute: null, messagesPerConnection: 100, onReply: [{ match: 'throttling failure', suspendMs: 10_000 }, { match: 'maximum sending rate', suspendMs: 10_000 }, { match: 'daily message quota', suspendMs: 3_600_000 }], ...BASE },
  identity: NO_SENDING_IDENTITY,
  providers: [
    { name: 'gmail', mx: ['*.google.com', '*.googlemail.com'], maxConnections: 20, messagesPerMinute: 3000, messagesPerConnection: 100, onReply: [{ match: '4.7.28', suspendMs: 15 * 60_000 }], ...BASE },
    { name: 'microsoft', mx: ['*.mail.protection.outlook.com', '*.olc.protection.outlook.com'], maxConnections: 10, messagesPerMinute: 1200, messagesPerConnection: 50, onReply: [{ match: '4.7.650', suspendMs: 30 * 60_000 }, { match: '4.7.651', suspendMs: 30 * 60_000 }], ...BASE },
    { name: 'yahoo', mx: ['*.yahoodns.net'], maxConnections: 10, messagesPerMinute: 600, messagesPerConnection: 20, onReply: [{ match: 'TSS04', suspendMs: 30 * 60_000 }, { match: 'TSS05', suspendMs: 60 * 60_000 }], ...BASE },
    { name: 'icloud', mx: ['*.icloud.com', '*.apple.com'], maxConnections: 10, messagesPerMinute: 600, messagesPerConnection: 50, onReply: [{ match: 'rate limit', suspendMs: 15 * 60_000 }], ...BASE },
  ],
};

/** The rules a reply is matched against: the provider's own first, then the generic ones. */
export function rulesOf(p: ProviderPolicy): ReplyRule[] {
  return [...p.onReply, ...GENERIC_RULES];
}

/** `*.google.com` matches `aspmx.l.google.com` (and `google.com` itself does not). */
export function globMatches(glob: string, host: string): boolean {
  return globPattern(glob).test(host.toLowerCase().replace(/\.$/, ''));
}

/**
 * Each glob's expression, compiled once: every message's destination is matched against every
 * provider's globs, and compiling them anew took more of a worker's time than the matching.
 * The globs are the policy's (a few dozen at most), so the cache stays that small.
 */
const globPatterns = new Map<string, RegExp>();

function globPattern(glob: string): RegExp {
  let re = globPatterns.get(glob);
  if (re === undefined) {
    re = new RegExp('^' + glob.toLowerCase().split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[^]*') + '$');
    globPatterns.set(glob, re);
  }
  return re;
}

/** Where a message goes, as shaping sees it: one budget per key. */
export interface Destination {
  /** `gmail`, `relay`, or `mx:<sorted MX hosts>` for a rolled-up destination under `default`. */
  key: string;
  /** The sending source (IP pool) dimension: '' until sources exist. */
  source: string;
  policy: ProviderPolicy;
}

/**
 * The destination of a recipient domain from its MX host names: the first provider with a
 * pattern matching any of them, else the MX host set itself under `default` (domains served
 * by the same hosts share one budget).
 */
export function destinationFor(policy: DeliveryPolicy, mxHosts: string[]): Destination {
  const hosts = [...new Set(mxHosts.map((h) => h.toLowerCase().replace(/\.$/, '')))].sort();
  for (const p of policy.providers) {
    if (hosts.some((h) => p.mx.some((g) => globMatches(g, h)))) return { key: p.name, source: '', policy: p };
  }
  return { key: `mx:${hosts.join(',')}`, source: '', policy: policy.default };
}

export function relayDestination(policy: DeliveryPolicy): Destination {
  return { key: 'relay', source: '', policy: policy.relay };
}

type Json = Record<string, unknown>;

function positiveInt(v: unknown, key: string, allowNull = false): number | null {
  if (v === null && allowNull) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 10_000_000) throw new PolicyError(key, `must be a positive integer${allowNull ? ' or null' : ''}, got ${JSON.stringify(v)}`);
  return v;
}

function duration(v: unknown, key: string): number {
  const ms = typeof v === 'string' ? parseDuration(v) : null;
  if (ms === null) throw new PolicyError(key, `must be a duration like "10s", "5m" or "1h", got ${JSON.stringify(v)}`);
  return ms;
}

const PROVIDER_KEYS = new Set(['name', 'mx', 'maxConnections', 'messagesPerMinute', 'messagesPerConnection', 'messagesPerDay', 'onReply', 'greylistRetry', 'resumeFactor', 'rampEvery']);

/** One provider block over `base`: given keys replace, missing keys keep the base's. */
function readProvider(raw: unknown, key: string, base: ProviderPolicy, opts: { named: boolean; relay: boolean }): ProviderPolicy {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new PolicyError(key, 'must be an object');
  const o = raw as Json;
  for (const k of Object.keys(o)) {
    if (!PROVIDER_KEYS.has(k)) throw new PolicyError(`${key}.${k}`, 'is not a known key');
    if (k === 'messagesPerDay' && !opts.relay) throw new PolicyError(`${key}.${k}`, 'applies to the relay only');
    if ((k === 'name' || k === 'mx') && !opts.named) throw new PolicyError(`${key}.${k}`, 'is not allowed here');
  }
  const p: ProviderPolicy = { ...base, onReply: [...base.onReply], mx: [...base.mx] };
  if (opts.named) {
    if (typeof o.name !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,62}$/.test(o.name) || o.name === 'default' || o.name === 'relay') {
      throw new PolicyError(`${key}.name`, 'must be a lower-case name of letters, digits, - and _ (not "default" or "relay")');
    }
    p.name = o.name;
    if (!Array.isArray(o.mx) || o.mx.length === 0 || !o.mx.every((g) => typeof g === 'string' && /^[a-zA-Z0-9.*-]+$/.test(g))) {
      throw new PolicyError(`${key}.mx`, 'must be a non-empty array of host name patterns like "*.google.com"');
    }
    p.mx = o.mx as string[];
  }
  if ('maxConnections' in o) p.maxConnections = positiveInt(o.maxConnections, `${key}.maxConnections`)!;
  if ('messagesPerMinute' in o) p.messagesPerMinute = positiveInt(o.messagesPerMinute, `${key}.messagesPerMinute`, true);
  if ('messagesPerConnection' in o) p.messagesPerConnection = positiveInt(o.messagesPerConnection, `${key}.messagesPerConnection`)!;
  if ('messagesPerDay' in o) p.messagesPerDay = positiveInt(o.messagesPerDay, `${key}.messagesPerDay`, true);
  if ('greylistRetry' in o) p.greylistRetryMs = duration(o.greylistRetry, `${key}.greylistRetry`);
  if ('rampEvery' in o) p.rampEveryMs = duration(o.rampEvery, `${key}.rampEvery`);
  if ('resumeFactor' in o) {
    if (typeof o.resumeFactor !== 'number' || !(o.resumeFactor > 0 && o.resumeFactor <= 1)) throw new PolicyError(`${key}.resumeFactor`, `must be a number in (0, 1], got ${JSON.stringify(o.resumeFactor)}`);
    p.resumeFactor = o.resumeFactor;
  }
  if ('onReply' in o) {
    if (!Array.isArray(o.onReply)) throw new PolicyError(`${key}.onReply`, 'must be an array');
    p.onReply = o.onReply.map((r, i) => {
      const rk = `${key}.onReply[${i}]`;
      if (typeof r !== 'object' || r === null) throw new PolicyError(rk, 'must be an object');
      const rule = r as Json;
      for (const k of Object.keys(rule)) if (k !== 'match' && k !== 'suspend') throw new PolicyError(`${rk}.${k}`, 'is not a known key');
      if (typeof rule.match !== 'string' || rule.match.trim() === '' || rule.match.length > 200) throw new PolicyError(`${rk}.match`, 'must be a non-empty string');
      return { match: rule.match.trim(), suspendMs: duration(rule.suspend, `${rk}.suspend`) };
    });
  }
  return p;
}

/** Reads a policy document over the shipped one. Throws PolicyError naming the bad key. */
export function parsePolicy(doc: unknown, shipped: DeliveryPolicy = SHIPPED_POLICY): DeliveryPolicy {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new PolicyError('(root)', 'must be a JSON object');
  const o = doc as Json;
  for (const k of Object.keys(o)) if (!['default', 'relay', 'providers', 'sources', 'pools'].includes(k)) throw new PolicyError(k, 'is not a known key');
  const def = 'default' in o ? readProvider(o.default, 'default', shipped.default, { named: false, relay: false }) : shipped.default;
  const relay = 'relay' in o ? readProvider(o.relay, 'relay', shipped.relay, { named: false, relay: true }) : shipped.relay;
  const providers = [...shipped.providers];
  if ('providers' in o) {
    if (!Array.isArray(o.providers)) throw new PolicyError('providers', 'must be an array');
    const seen = new Set<string>();
    o.providers.forEach((raw, i) => {
      // A provider given in the file starts from the default block, not from the shipped one it replaces.
      const p = readProvider(raw, `providers[${i}]`, { ...def, onReply: [] }, { named: true, relay: false });
      if (seen.has(p.name)) throw new PolicyError(`providers[${i}].name`, `"${p.name}" is given twice`);
      seen.add(p.name);
      const at = providers.findIndex((s) => s.name === p.name);
      // Given providers come first: their patterns win over a shipped provider's.
      if (at >= 0) providers.splice(at, 1);
      providers.unshift(p);
    });
    providers.sort((a, b) => Number(seen.has(b.name)) - Number(seen.has(a.name)));
  }
  return { default: def, relay, providers, identity: readIdentity(o) };
}

function readIdentity(o: Json): SendingIdentity {
  try {
    return parseSendingIdentity(o);
  } catch (err) {
    if (err instanceof SendingIdentityError) throw new PolicyError(err.key, err.reason);
    throw err;
  }
}

/** The policy of POSTLINE_DELIVERY_POLICY (a path), else the shipped one. */
export function loadPolicy(path: string | undefined): DeliveryPolicy {
  if (!path) return SHIPPED_POLICY;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new PolicyError('(file)', `cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new PolicyError('(file)', `is not valid JSON: ${(err as Error).message}`);
  }
  return parsePolicy(doc);
}
