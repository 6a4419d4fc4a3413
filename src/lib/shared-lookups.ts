/**
 * Lookups in flight, by key: callers that ask for a key while its lookup is under way wait for
 * that one instead of starting their own (a burst of requests or messages meeting an empty or
 * expired cache entry). The entry goes when the lookup settles, or with `clear`.
 */
export class SharedLookups<K, V> {
  private readonly pending = new Map<K, Promise<V>>();

  run(key: K, start: () => Promise<V>): Promise<V> {
    const running = this.pending.get(key);
    if (running) return running;
    const started: Promise<V> = start().finally(() => {
      // A `clear` (and a lookup started after it) may have replaced this one meanwhile.
      if (this.pending.get(key) === started) this.pending.delete(key);
    });
    this.pending.set(key, started);
    return started;
  }

  /** Later callers start afresh; those already waiting keep their lookup. */
  clear(): void {
    this.pending.clear();
  }
}
