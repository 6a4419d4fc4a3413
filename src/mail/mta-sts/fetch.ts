/**
 * Fetches a domain's MTA-STS policy file (RFC 8461 §3.3) from
 * `https://mta-sts.<domain>/.well-known/mta-sts.txt`:
 * - the host name is resolved through the mail DNS resolver (the same one MX lookups use),
 *   so a deployment pointed at its own resolver, and the tests' loopback zone, see one world;
 * - the certificate must be valid for `mta-sts.<domain>` against Node's trust store, which
 *   includes NODE_EXTRA_CA_CERTS (or against `extraCa` added to Node's roots, for a test);
 * - only a 200 answer counts: redirects are not followed (§3.3 forbids it);
 * - at most `maxBytes` (64 KB) and `timeoutMs` for the whole exchange.
 * Failures come back as data, in TLS-reporting terms (RFC 8460 §4.3.2.2).
 */
import { request } from 'node:https';
import { rootCertificates } from 'node:tls';
import { isIP, type LookupFunction } from 'node:net';
import type { MailDns } from '../dns.js';
import { certificateFailureOf } from '../tls-failure.js';
import { parseStsPolicy, type StsPolicy } from './policy.js';

export type StsFetchFailure = 'sts-policy-fetch-error' | 'sts-policy-invalid' | 'sts-webpki-invalid';

export type StsFetchResult =
  | { ok: true; policy: StsPolicy; text: string }
  | { ok: false; failure: StsFetchFailure; error: string };

export interface StsFetchOptions {
  dns: Pick<MailDns, 'resolveHostAddresses'>;
  /** 443; tests serve the policy on another port of a loopback address. */
  port?: number;
  timeoutMs?: number;
  maxBytes?: number;
  /** CA certificates (PEM) trusted in addition to Node's roots. Unset: Node's own store (with NODE_EXTRA_CA_CERTS). */
  extraCa?: string[];
}

export const POLICY_PATH = '/.well-known/mta-sts.txt';
export const DEFAULT_POLICY_MAX_BYTES = 64 * 1024;
/** RFC 8461 §3.3 suggests a minute; a policy host that slow holds mail up, so less. */
export const DEFAULT_POLICY_TIMEOUT_MS = 20_000;

export async function fetchStsPolicy(domain: string, opts: StsFetchOptions): Promise<StsFetchResult> {
  const host = `mta-sts.${domain}`;
  const maxBytes = opts.maxBytes ?? DEFAULT_POLICY_MAX_BYTES;
  const fetched = await getPolicyText(host, opts, maxBytes);
  if (!fetched.ok) return fetched;
  const parsed = parseStsPolicy(fetched.text);
  if (!parsed.ok) return { ok: false, failure: 'sts-policy-invalid', error: `${host}: ${parsed.error}` };
  return { ok: true, policy: parsed.value, text: fetched.text };
}

/** A `lookup` for node:net that answers from the mail resolver instead of the system's. */
function lookupThrough(dns: StsFetchOptions['dns']): LookupFunction {
  return (hostname, options, callback) => {
    dns.resolveHostAddresses(hostname).then(
      (found) => {
        const addresses = found.addresses.map((address) => ({ address, family: isIP(address) }));
        if (addresses.length === 0) {
          const err = Object.assign(new Error(`${hostname}: no address${found.tempError ? ` (${found.tempError})` : ''}`), { code: found.tempError ?? 'ENOTFOUND' });
          callback(err, '', 4);
        } else if (options.all) {
          (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, addresses);
        } else {
          callback(null, addresses[0].address, addresses[0].family);
        }
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, '', 4),
    );
  };
}

function getPolicyText(host: string, opts: StsFetchOptions, maxBytes: number): Promise<{ ok: true; text: string } | Extract<StsFetchResult, { ok: false }>> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_POLICY_TIMEOUT_MS;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: Awaited<ReturnType<typeof getPolicyText>>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(r);
    };
    const fail = (failure: StsFetchFailure, error: string) => finish({ ok: false, failure, error: `${host}: ${error}` });

    const req = request({
      host,
      servername: host,
      port: opts.port ?? 443,
      path: POLICY_PATH,
      method: 'GET',
      headers: { accept: 'text/plain' },
      lookup: lookupThrough(opts.dns),
      agent: false,
      rejectUnauthorized: true,
      ...(opts.extraCa ? { ca: [...rootCertificates, ...opts.extraCa] } : {}),
    });
    const timer = setTimeout(() => fail('sts-policy-fetch-error', `no complete answer within ${timeoutMs} ms`), timeoutMs);

    req.on('error', (err) => {
      const cert = certificateFailureOf(err);
      if (cert) fail('sts-webpki-invalid', `certificate not valid (${cert}: ${err.message})`);
      else fail('sts-policy-fetch-error', err.message);
    });
    req.on('response', (res) => {
      if (res.statusCode !== 200) return fail('sts-policy-fetch-error', `HTTP ${res.statusCode} (only 200 counts; redirects are not followed)`);
      const type = String(res.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (type !== 'text/plain') return fail('sts-policy-invalid', `Content-Type "${type}" is not text/plain`);
      if (Number(res.headers['content-length'] ?? 0) > maxBytes) return fail('sts-policy-invalid', `policy larger than ${maxBytes} bytes`);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return fail('sts-policy-invalid', `policy larger than ${maxBytes} bytes`);
        chunks.push(chunk);
      });
      res.on('end', () => finish({ ok: true, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => fail('sts-policy-fetch-error', err.message));
    });
    req.end();
  });
}
