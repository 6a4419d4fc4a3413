/**
 * A bounded cache keyed by long strings (whole documents, their blocks) that never hashes a
 * key. A Map hashes every new string it is asked about, all of it: ~7 µs for a 4 KB document
 * that arrives as a fresh string with each message, on every lookup that then misses because
 * the content is the recipient's own (docs/decisions/0045-build-step-content.md). Here a key
 * is found by its length, then compared with the few entries of that length, newest first:
 * content that differs is told apart at its first differing character, equal content costs
 * one comparison.
 *
 * At most `maxEntries`, the oldest set dropped first; a hit is not set again. At most `SCAN`
 * entries of one length are kept, the oldest of that length dropped for a new one, so a lookup
 * compares at most SCAN keys however many copies share a length (per-recipient blocks of one
 * template often do; they are seldom asked for again).
 *
 * It answers "this very content again", never "a copy of": a template's per-recipient copies
 * miss here and are read from an earlier copy by the readers that share ./document-copies.ts
 * (docs/decisions/0060-one-copy-search.md).
 */
const SCAN = 8;

interface Entry<V> {
  key: string;
  value: V;
  /** Its place in the ring. */
  slot: number;
}

export class ContentCache<V> {
  private readonly byLength = new Map<number, Entry<V>[]>();
  /** Entries in the order they were set, a ring: `next` is the oldest once it is full. */
  private readonly ring: (Entry<V> | undefined)[];
  private next = 0;
  private count = 0;

  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError(`maxEntries must be a whole number ≥ 1, not ${maxEntries}`);
    this.ring = new Array<Entry<V> | undefined>(maxEntries);
  }

  get(key: string): V | undefined {
    const entries = this.byLength.get(key.length);
    if (entries === undefined) return undefined;
    for (let i = entries.length - 1; i >= 0; i--) if (entries[i].key === key) return entries[i].value;
    return undefined;
  }

  /** Adds the newest entry; called after get missed. */
  set(key: string, value: V): void {
    const oldest = this.ring[this.next];
    if (oldest !== undefined) this.remove(oldest);
    const entry = { key, value, slot: this.next };
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.maxEntries;
    this.count++;
    const entries = this.byLength.get(key.length);
    if (entries === undefined) this.byLength.set(key.length, [entry]);
    else {
      if (entries.length >= SCAN) this.remove(entries[0]);
      entries.push(entry);
    }
  }

  get size(): number {
    return this.count;
  }

  private remove(entry: Entry<V>): void {
    this.ring[entry.slot] = undefined;
    this.count--;
    const entries = this.byLength.get(entry.key.length)!;
    // The oldest of its length is almost always first.
    if (entries[0] === entry) entries.shift();
    else entries.splice(entries.indexOf(entry), 1);
    if (entries.length === 0) this.byLength.delete(entry.key.length);
  }
}
