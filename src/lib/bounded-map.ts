/**
 * A Map that holds at most `maxEntries`: setting a new key when full drops the oldest one
 * (first set, as a Map iterates). The per-process memos and caches use it (address parses,
 * imported DKIM keys, verified API keys, MX answers, campaign content) so a busy process
 * cannot grow one without bound. Re-setting a key makes it the newest. Caches keyed by whole
 * documents use ./content-cache.ts instead, which does not hash its keys.
 */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a whole number ≥ 1, not ${maxEntries}`);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  set(key: K, value: V): this {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as K);
    this.entries.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  /** Entries oldest first. */
  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries[Symbol.iterator]();
  }
}
