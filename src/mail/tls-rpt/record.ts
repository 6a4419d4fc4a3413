/**
 * The `_smtp._tls.<domain>` TXT record of TLS reporting (RFC 8460 §3): where a domain wants
 * its reports. `v=TLSRPTv1; rua=mailto:tls@example.com,https://reports.example.com/tlsrpt`.
 * Records not starting with `v=TLSRPTv1` are ignored; anything but exactly one valid record
 * means the domain asks for no reports.
 */
import type { Parsed } from '../mta-sts/policy.js';

export function parseTlsRptRecord(txtRecords: string[]): Parsed<{ rua: string[] }> {
  const candidates = txtRecords.map((r) => r.trim()).filter((r) => /^v=TLSRPTv1\s*(;|$)/.test(r));
  if (candidates.length !== 1) return { ok: false, error: candidates.length === 0 ? 'no v=TLSRPTv1 record' : `${candidates.length} v=TLSRPTv1 records (exactly one is allowed)` };
  const rua = candidates[0].split(';').map((f) => f.trim()).find((f) => /^rua\s*=/.test(f));
  if (!rua) return { ok: false, error: 'the record has no rua' };
  const uris = rua.slice(rua.indexOf('=') + 1).split(',').map((u) => u.trim()).filter(Boolean);
  const valid = uris.filter((u) => {
    if (/^mailto:[^\s@]+@[^\s@]+$/i.test(u)) return true;
    try {
      return new URL(u).protocol === 'https:';
    } catch {
      return false;
    }
  });
  if (valid.length === 0) return { ok: false, error: 'rua names no mailto: or https: address' };
  return { ok: true, value: { rua: valid } };
}
