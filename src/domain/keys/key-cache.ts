import type { Clock } from '../../clock.js';
import type { LiveKeyRow } from '../../db/queries/api-keys.js';
import { BoundedMap } from '../../lib/bounded-map.js';
import { SharedLookups } from '../../lib/shared-lookups.js';

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
  /** Lookups in flight, by key hash: the requests of a burst that find no entry share one. */
  private readonly pending = new SharedLookups<string, LiveKeyRow | null>();
  /** Moves on with every `forgetKey`, so a lookup that began before a revocation here is not kept. */
  private generation = 0;

  constructor(
    private readonly clock: Clock,
    readonly ttlMs = KEY_CACHE_MS,
    maxEntries = 10_000,
  ) {
    this.entries = new BoundedMap(maxEntries);
  }

  /**
   * The verified key of `hash`: the kept entry while it is fresh, otherwise `load`'s answer,
   * kept when positive. Concurrent requests with the same key whose entry ran out (or that
   * arrive before the first answer) wait for one `load` instead of each asking the database:
   * under load an expired entry met up to a connection pool's worth of lookups of one key.
   */
  lookup(hash: Buffer, load: () => Promise<LiveKeyRow | null>): LiveKeyRow | Promise<LiveKeyRow | null> {
    const id = hash.toString('base64');
    const row = this.fresh(id);
    if (row) return row;
    const generation = this.generation;
    return this.pending.run(id, async () => {
      const loaded = await load();
      if (loaded && generation === this.generation) this.entries.set(id, { row: loaded, at: this.clock.now().getTime() });
      return loaded;
    });
  }

  private fresh(id: string): LiveKeyRow | null {
    const hit = this.entries.get(id);
    if (!hit) return null;
    const age = this.clock.now().getTime() - hit.at;
    if (age >= 0 && age < this.ttlMs) return hit.row;
    this.entries.delete(id);
    return null;
  }

  /** A key revoked through this process stops working here at once. */
  forgetKey(keyId: string): void {
    this.generation++;
    this.pending.clear();
    for (const [id, e] of this.entries) if (e.row.key_id === keyId) this.entries.delete(id);
  }
}

/** How long a verified key is trusted without asking the database again. */
export const KEY_CACHE_MS = 5_000;
