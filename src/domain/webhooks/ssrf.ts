/**
 * Outbound requests to customer-chosen URLs (webhooks) must not reach the platform's own
 * network: loopback, private ranges, link-local (cloud metadata at 169.254.169.254), CGNAT,
 * unique-local IPv6, and IPv6 forms that embed an IPv4 address (mapped, NAT64, 6to4).
 *
 * The check runs on every address a host name resolves to (a name with one public and one
 * private address is refused), at creation and again before each delivery. The connection is
 * then made to the address that was checked (a pinned `lookup`), so a DNS answer that changes
 * between the check and the connect (DNS rebinding) cannot slip a private address in.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';

interface Range {
  bytes: number[];
  bits: number;
  why: string;
}

function v4(cidr: string, why: string): Range {
  const [ip, bits] = cidr.split('/');
  return { bytes: ip.split('.').map(Number), bits: Number(bits), why };
}

function v6(cidr: string, why: string): Range {
  const [ip, bits] = cidr.split('/');
  return { bytes: [...parseIPv6(ip)], bits: Number(bits), why };
}

// IANA special-purpose registries (RFC 6890 and successors): nothing here is a public host.
const V4_BLOCKED: Range[] = [
  v4('0.0.0.0/8', '"this network" (0.0.0.0/8)'),
  v4('10.0.0.0/8', 'private (10.0.0.0/8)'),
  v4('100.64.0.0/10', 'carrier-grade NAT (100.64.0.0/10)'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.169.254/32', 'cloud metadata endpoint'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private (172.16.0.0/12)'),
  v4('192.0.0.0/24', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'documentation range'),
  v4('192.88.99.0/24', '6to4 relay anycast'),
  v4('192.168.0.0/16', 'private (192.168.0.0/16)'),
  v4('198.18.0.0/15', 'benchmarking range'),
  v4('198.51.100.0/24', 'documentation range'),
  v4('203.0.113.0/24', 'documentation range'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved'),
];

const V6_BLOCKED: Range[] = [
  v6('::/128', 'unspecified address'),
  v6('::1/128', 'loopback'),
  v6('100::/64', 'discard-only range'),
  v6('2001::/23', 'IETF protocol assignments (Teredo, ORCHID…)'),
  v6('2001:db8::/32', 'documentation range'),
  v6('fc00::/7', 'unique-local (fc00::/7)'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local'),
  v6('ff00::/8', 'multicast'),
];
const V6_GLOBAL_UNICAST = v6('2000::/3', '');

function inRange(bytes: Uint8Array | number[], r: Range): boolean {
  let bits = r.bits;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i] & mask) !== (r.bytes[i] & mask)) return false;
  }
  return true;
}

/** 16 bytes of an IPv6 address (with `::` and an optional dotted IPv4 tail). Input must be valid. */
function parseIPv6(ip: string): Uint8Array {
  let s = ip.split('%')[0];
  const out = new Uint8Array(16);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    s = s.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = s.includes('::') ? s.split('::') : [s, undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[i * 2] = n >> 8;
    out[i * 2 + 1] = n & 0xff;
  });
  return out;
}

function embeddedIPv4(bytes: Uint8Array): string | null {
  const at = (o: number) => `${bytes[o]}.${bytes[o + 1]}.${bytes[o + 2]}.${bytes[o + 3]}`;
  const zero = (from: number, to: number) => bytes.slice(from, to).every((b) => b === 0);
  if (zero(0, 10) && bytes[10] === 0xff && bytes[11] === 0xff) return at(12); // ::ffff:a.b.c.d (mapped)
  if (zero(0, 12)) return null; // ::/96 (IPv4-compatible, deprecated) is outside 2000::/3 anyway
  if (bytes[0] === 0x00 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zero(4, 12)) return at(12); // 64:ff9b::/96 NAT64
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return at(2); // 2002::/16 6to4
  return null;
}

/** Why `address` must not be contacted, or null when it is a public unicast address. */
export function forbiddenAddressReason(address: string): string | null {
  const family = isIP(address.split('%')[0]);
  if (family === 4) {
    const bytes = address.split('.').map(Number);
    return V4_BLOCKED.find((r) => inRange(bytes, r))?.why ?? null;
  }
  if (family === 6) {
    const bytes = parseIPv6(address);
    const inner = embeddedIPv4(bytes);
    if (inner) {
      const why = forbiddenAddressReason(inner);
      return why ? `${why}, embedded in an IPv6 address` : null;
    }
    const blocked = V6_BLOCKED.find((r) => inRange(bytes, r));
    if (blocked) return blocked.why;
    return inRange(bytes, V6_GLOBAL_UNICAST) ? null : 'reserved IPv6 range';
  }
  return 'not an IP address';
}

/** A refusal to contact a URL: a forbidden address or a name that does not resolve. */
export class ForbiddenTargetError extends Error {
  readonly code = 'forbidden_target';
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenTargetError';
  }
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** The host part of a URL as an address or name (IPv6 literals lose their brackets). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/**
 * Resolves the URL's host and checks every address. With `allowPrivate` (tests, development)
 * nothing is refused, but the answer is still pinned. Throws ForbiddenTargetError.
 */
export async function resolveAllowedAddresses(
  url: URL,
  opts: { allowPrivate: boolean; resolve?: Resolver },
): Promise<LookupAddress[]> {
  const host = hostOf(url);
  let addresses: LookupAddress[];
  if (isIP(host)) {
    addresses = [{ address: host, family: isIP(host) }];
  } else {
    try {
      addresses = await (opts.resolve ?? systemResolver)(host);
    } catch (err) {
      throw new ForbiddenTargetError(`host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'})`);
    }
    if (addresses.length === 0) throw new ForbiddenTargetError(`host ${host} does not resolve`);
  }
  if (!opts.allowPrivate) {
    for (const a of addresses) {
      const why = forbiddenAddressReason(a.address);
      if (why) throw new ForbiddenTargetError(`${host === a.address ? host : `${host} resolves to ${a.address}, which`} is not a public address: ${why}`);
    }
  }
  return addresses;
}

/**
 * A `lookup` for http.request that answers only with the addresses already checked, whatever
 * DNS says now. Handles both call shapes (`all: true` is used by Happy Eyeballs).
 */
export function pinnedLookup(addresses: LookupAddress[]): LookupFunction {
  return ((_hostname: string, options: { all?: boolean; family?: number } | number, callback: (...args: unknown[]) => void) => {
    const opts = typeof options === 'number' ? { family: options } : options;
    const wanted = opts.family === 4 || opts.family === 6 ? addresses.filter((a) => a.family === opts.family) : addresses;
    const list = wanted.length > 0 ? wanted : addresses;
    if (opts.all) callback(null, list);
    else callback(null, list[0].address, list[0].family);
  }) as LookupFunction;
}


/** What one POST came to: an HTTP answer, or no answer (timeout, connection, refused target). */
export type PostResult =
  | { kind: 'response'; status: number; retryAfter: string | null; location: string | null; body: string; durationMs: number }
  | { kind: 'timeout' | 'connection' | 'forbidden'; error: string; durationMs: number };

// Keep-alive per process: a busy hook sends its batches over one warm connection. Idle
// sockets are dropped after 4 s (or sooner when the server's Keep-Alive hint says so), before
// the common 5 s server timeout, so a reused socket is rarely one the server just closed.
const AGENTS = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 16, timeout: 4000 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 16, timeout: 4000 }),
};
const MAX_RESPONSE_TEXT = 512;

/**
 * POSTs `body` to `url`: the target is checked (every resolved address) and pinned; redirects
 * are never followed (a 3xx comes back as the response it is); the whole exchange has
 * `timeoutMs`. Only the start of the response body is kept, for the attempt log. Never throws.
 */
export async function guardedPost(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  opts: { allowPrivate: boolean; timeoutMs: number; resolve?: Resolver },
): Promise<PostResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAllowedAddresses(url, opts);
  } catch (err) {
    return { kind: 'forbidden', error: (err as Error).message, durationMs: took() };
  }
  const deadline = Date.now() + opts.timeoutMs;
  let result = await postOnce(url, body, headers, addresses, deadline);
  // A kept-alive socket the server closed just as we reused it: one fresh try (Node's advice).
  if (result.kind === 'connection' && result.reusedSocket) result = await postOnce(url, body, headers, addresses, deadline);
  const { reusedSocket: _, ...rest } = result;
  if (rest.kind === 'timeout') rest.error = `timeout: no complete response within ${opts.timeoutMs} ms`;
  return { ...rest, durationMs: took() };
}

function postOnce(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  addresses: LookupAddress[],
  deadline: number,
): Promise<PostResult & { reusedSocket?: boolean }> {
  return new Promise((resolve) => {
    const transport = url.protocol === 'https:' ? https : http;
    let settled = false;
    const finish = (r: PostResult & { reusedSocket?: boolean }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(body.length) },
      agent: AGENTS[url.protocol as 'http:' | 'https:'],
      lookup: pinnedLookup(addresses),
    });
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', error: 'timeout: no complete response in time', durationMs: 0 });
      req.destroy();
    }, Math.max(1, deadline - Date.now()));
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish({ kind: 'connection', error: `${err.code ?? 'error'}: ${err.message}`, durationMs: 0, reusedSocket: req.reusedSocket });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      res.on('data', (c: Buffer) => {
        if (kept < MAX_RESPONSE_TEXT) {
          chunks.push(c);
          kept += c.length;
        }
      });
      res.on('end', () => {
        const header = (name: string) => {
          const v = res.headers[name];
          return (Array.isArray(v) ? v[0] : v) ?? null;
        };
        finish({
          kind: 'response',
          status: res.statusCode ?? 0,
          retryAfter: header('retry-after'),
          location: header('location'),
          body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_RESPONSE_TEXT),
          durationMs: 0,
        });
      });
      res.on('error', (err) => finish({ kind: 'connection', error: `response aborted: ${err.message}`, durationMs: 0 }));
    });
    req.end(body);
  });
}
