import type { Clock } from '../../clock.js';
import type { LiveKeyRow } from '../../db/queries/api-keys.js';
import { BoundedMap } from '../../lib/bounded-map.js';

/**
 * Verified API keys, remembered per process for `ttlMs` : a request with a key
 * seen within that time needs no key lookup. What that costs (docs/api-keys.md): a key
 * revoked, or an account's name or quota changed, by another process (the CLI, another API
 * instance) is still honoured by this one for at most `ttlMs`; a revocation through this
 * process's API takes effect at once (`forgetKey`). Only positive answers are kept, so a key
 * created a moment ago is never refused because of the cache, and unknown keys cannot fill
 * it. Entries are keyed by the key's SHA-256, never the key itself. Time comes from the
 * injected clock, so tests move past the window instead of waiting.
 */
export class VerifiedKeyCache {
  private readonly entries: BoundedMap<string, { row: LiveKeyRow; at: number }>;

  constructor(
    private readonly clock: Clock,
    readonly ttlMs = KEY_CACHE_MS,
    maxEntries = 10_000,
  ) {
    this.entries = new BoundedMap(maxEntries);
  }

  get(hash: Buffer): LiveKeyRow | null {
    const id = hash.toString('base64');
    const hit = this.entries.get(id);
    if (!hit) return null;
    const age = this.clock.now().getTime() - hit.at;
    if (age >= 0 && age < this.ttlMs) return hit.row;
    this.entries.delete(id);
    return null;
  }

  set(hash: Buffer, row: LiveKeyRow): void {
    this.entries.set(hash.toString('base64'), { row, at: this.clock.now().getTime() });
  }

  /** A key revoked through this process stops working here at once. */
  forgetKey(keyId: string): void {
    for (const [id, e] of this.entries) if (e.row.key_id === keyId) this.entries.delete(id);
  }
}

/** How long a verified key is trusted without asking the database again. */
export const KEY_CACHE_MS = 5_000;
