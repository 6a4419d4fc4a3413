/**
 * MTA-STS (RFC 8461) as data: the `_mta-sts` TXT record, the policy file, and which MX host
 * names a policy allows. Pure functions; fetching and caching are in fetch.ts and resolver.ts.
 *
 * Parsing is strict where the RFC is (a policy we misread could send mail in plaintext or
 * stop it): the version must be STSv1, the mode one of three words, max_age digits within a
 * year, every mx a host name or a `*.`-prefixed one; unknown fields are ignored (§3.2 lets
 * policies grow). A field other than mx given twice is an error rather than a guess.
 */

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  mode: StsMode;
  /** Seconds the policy may be cached (RFC 8461 §3.2: at most 31557600). */
  maxAgeSeconds: number;
  /** Lower-case MX patterns: `mail.example.com` or `*.example.net`. */
  mx: string[];
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** RFC 8461 §3.2: max_age is at most 31557600 seconds (a year). */
export const MAX_POLICY_AGE_SECONDS = 31_557_600;

/** RFC 8461 §3.1: `sts-id = 1*32(ALPHA / DIGIT)`. */
const STS_ID = /^[A-Za-z0-9]{1,32}$/;

/**
 * The `_mta-sts.<domain>` TXT answer → the policy id. §3.1: records that do not start with
 * `v=STSv1;` are ignored; anything but exactly one remaining, valid record means "no policy".
 */
export function parseStsRecord(txtRecords: string[]): Parsed<{ id: string }> {
  const candidates = txtRecords.filter((r) => /^v=STSv1;/.test(r.trim()) || r.trim() === 'v=STSv1');
  if (candidates.length === 0) return { ok: false, error: 'no v=STSv1 record' };
  if (candidates.length > 1) return { ok: false, error: `${candidates.length} v=STSv1 records (exactly one is allowed)` };
  const fields = new Map<string, string>();
  for (const part of candidates[0].split(';')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const eq = trimmed.indexOf('=');
    if (eq <= 0) return { ok: false, error: `malformed field "${trimmed}"` };
    const key = trimmed.slice(0, eq).trim();
    if (!fields.has(key)) fields.set(key, trimmed.slice(eq + 1).trim());
  }
  const id = fields.get('id');
  if (id === undefined) return { ok: false, error: 'the record has no id' };
  if (!STS_ID.test(id)) return { ok: false, error: `id "${id}" is not 1 to 32 letters and digits` };
  return { ok: true, value: { id } };
}

/** A host name label: letters, digits, hyphens, not at either end (IDNs arrive as A-labels). */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

function isHostName(name: string): boolean {
  if (name.length > 253) return false;
  const labels = name.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l));
}

/** `mail.example.com` or `*.example.com` (§3.2: the wildcard only as the whole left-most label). */
function isMxPattern(pattern: string): boolean {
  return pattern.startsWith('*.') ? isHostName(pattern.slice(2)) : isHostName(pattern);
}

/** The body of `https://mta-sts.<domain>/.well-known/mta-sts.txt` → a policy, or why not. */
export function parseStsPolicy(text: string): Parsed<StsPolicy> {
  const single = new Map<string, string>();
  const mx: string[] = [];
  // §3.2: fields are separated by LF or CRLF; trailing whitespace is allowed.
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.replace(/[ \t]+$/, '');
    if (line === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) return { ok: false, error: `line "${line.slice(0, 80)}" is not "key: value"` };
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    if (!/^[A-Za-z0-9_.-]+$/.test(key)) return { ok: false, error: `field name "${key.slice(0, 40)}" is not valid` };
    if (key === 'mx') {
      const pattern = value.toLowerCase().replace(/\.$/, '');
      if (!isMxPattern(pattern)) return { ok: false, error: `mx "${value.slice(0, 80)}" is not a host name or *.host pattern` };
      if (!mx.includes(pattern)) mx.push(pattern);
      continue;
    }
    if (key === 'version' || key === 'mode' || key === 'max_age') {
      if (single.has(key)) return { ok: false, error: `${key} is given more than once` };
      single.set(key, value);
    }
    // Other fields are extensions (§3.2): ignored.
  }

  const version = single.get('version');
  if (version !== 'STSv1') return { ok: false, error: version === undefined ? 'version is missing' : `version "${version}" is not STSv1` };
  const mode = single.get('mode');
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') {
    return { ok: false, error: mode === undefined ? 'mode is missing' : `mode "${mode}" is not enforce, testing or none` };
  }
  const maxAge = single.get('max_age');
  if (maxAge === undefined) return { ok: false, error: 'max_age is missing' };
  if (!/^\d{1,10}$/.test(maxAge) || Number(maxAge) > MAX_POLICY_AGE_SECONDS) {
    return { ok: false, error: `max_age "${maxAge}" is not a whole number of seconds up to ${MAX_POLICY_AGE_SECONDS}` };
  }
  // A policy that enforces or tests must name the hosts it allows; "none" may name none.
  if (mx.length === 0 && mode !== 'none') return { ok: false, error: 'mx is missing' };
  return { ok: true, value: { mode, maxAgeSeconds: Number(maxAge), mx } };
}

/**
 * RFC 8461 §4.1: a pattern matches the host name exactly, or, as `*.example.com`, a name
 * with exactly one more label on the left (`mx1.example.com`, not `example.com`, not
 * `a.b.example.com`). Case and a trailing dot do not matter.
 */
export function mxMatchesPattern(host: string, pattern: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  if (!pattern.startsWith('*.')) return name === pattern;
  const dot = name.indexOf('.');
  return dot > 0 && name.slice(dot + 1) === pattern.slice(2);
}

export function policyAllowsMx(policy: StsPolicy, host: string): boolean {
  return policy.mx.some((p) => mxMatchesPattern(host, p));
}
