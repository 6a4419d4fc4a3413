import { inSandbox, outsideSandbox } from './sandbox.js';

/**
 * Group commit in the application: callers submit one item each and wait for it to be
 * written; whatever arrives while a write is in flight is written together by the next one.
 * Alone, a submission is written at once (no timer, no added latency); under load, batches
 * grow by themselves to match it, so N concurrent requests cost about N / batch commits
 * instead of N. That matters where each request is a tiny insert: a commit (WAL flush, and
 * NOTIFY's cluster-wide commit lock) costs far more than a row.
 *
 * Nothing is acknowledged before it is committed: `submit` resolves after the write of its
 * batch succeeded. One bad item must not fail the others (a NUL in one account's
 * send used to fail every send batched with it): when a batch's write fails, it is split in
 * halves and each half written again, down to single items, so only the items whose own write
 * fails are rejected, each with its own error. `write` must be atomic (one statement or one
 * transaction), so a failed write left nothing behind to duplicate. Each process has its own
 * batches; no state outlives a write.
 */
export interface GroupCommitOptions<T> {
  maxBatch?: number;
  maxInFlight?: number;
  keyOf?: (item: T) => string;
  /**
   * A batch of fewer than `upTo` items waits up to `ms` for more before it is written (without
   * it, one is written as soon as no write is in flight). For writers whose every write has a
   * large fixed cost on the database and whose callers can wait: the delivery engine's outcome
   * record (docs/decisions/0046-worker-statements-planned-once.md).
   */
  gather?: { ms: number; upTo: number };
}

export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;
  /** With `keyOf`: how many items of each key are in writes now. */
  private busyKeys = new Map<string, number>();
  private readonly opts: GroupCommitOptions<T> & { maxBatch: number; maxInFlight: number };
  /** With `gather`: the wait for more items before a short batch is written, and whether it is over. */
  private gatherTimer: NodeJS.Timeout | null = null;
  private gathered = false;

  /**
   * `write` stores a batch in one statement and returns one result per item, in order;
   * batches hold at most `maxBatch` items (default 500). `maxInFlight` writes may run at once,
   * one by default: on this kind of machine a statement's round trip is CPU on both sides
   * (the client's socket write, the server's work), not wire time, so a second write in flight
   * only halves the batches and doubles the statements (bench:send-api 1,088–1,257 → 1,312–1,684 accepted/s, bench:tracking
   * 3,924–4,430 → 5,071–5,179 redirects/s with one; docs/benchmarks.md).
   * `keyOf` (optional) keeps the items of one key in submission order: an item waits while an
   * earlier item of its key is being written, so two overlapping writes never race on a key
   * (the second write would otherwise be free to commit first). `gather` (optional) trades
   * latency for fewer writes where a write's fixed cost dwarfs its items' (see its type).
   */
  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    opts: GroupCommitOptions<T> = {},
  ) {
    this.opts = { maxBatch: 500, maxInFlight: 1, ...opts };
  }

  submit(item: T): Promise<R> {
    // A test-key request's write goes to its own sandbox transaction (db/sandbox.ts), alone:
    // batched, it would carry the sandbox into the batch and take live items with it.
    if (inSandbox()) return this.write([item]).then((r) => r[0]);
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      if (this.waitForMore()) return;
      const batch = this.take();
      if (batch.length === 0) return; // every queued key is in a write; its end pumps again
      this.inFlight++;
      outsideSandbox(() => this.writeIsolated(batch))
        .finally(() => {
          this.inFlight--;
          this.release(batch);
          this.pump();
        });
    }
  }

  /**
   * With `gather`, whether a batch shorter than `upTo` waits (its timer started) rather than
   * being written now: up to `ms` from when a write could first have started.
   */
  private waitForMore(): boolean {
    const gather = this.opts.gather;
    if (!gather) return false;
    if (this.queue.length >= gather.upTo || this.gathered) {
      if (this.gatherTimer) clearTimeout(this.gatherTimer);
      this.gatherTimer = null;
      this.gathered = false;
      return false;
    }
    this.gatherTimer ??= setTimeout(() => {
      this.gatherTimer = null;
      this.gathered = true;
      this.pump();
    }, gather.ms);
    return true;
  }

  /** The next batch: the queue's head, or with `keyOf` the queued items whose key is free. */
  private take(): typeof this.queue {
    const keyOf = this.opts.keyOf;
    if (!keyOf) return this.queue.splice(0, this.opts.maxBatch);
    const batch: typeof this.queue = [];
    const rest: typeof this.queue = [];
    // A key held back stays held back for the rest of this pass: its later items keep their order.
    const blocked = new Set<string>();
    for (const entry of this.queue) {
      const key = keyOf(entry.item);
      if (batch.length >= this.opts.maxBatch || blocked.has(key) || this.busyKeys.has(key)) {
        blocked.add(key);
        rest.push(entry);
      } else {
        batch.push(entry);
      }
    }
    this.queue = rest;
    for (const entry of batch) {
      const key = keyOf(entry.item);
      this.busyKeys.set(key, (this.busyKeys.get(key) ?? 0) + 1);
    }
    return batch;
  }

  private release(batch: typeof this.queue): void {
    const keyOf = this.opts.keyOf;
    if (!keyOf) return;
    for (const entry of batch) {
      const key = keyOf(entry.item);
      const n = (this.busyKeys.get(key) ?? 1) - 1;
      if (n === 0) this.busyKeys.delete(key);
      else this.busyKeys.set(key, n);
    }
  }

  /**
   * Writes `batch`; on failure bisects it, so a batch of n with one bad item costs about
   * 2·log2(n) extra statements, not n, and a failure of the database itself (every write
   * fails) reaches every caller as its own rejection.
   */
  private async writeIsolated(batch: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[]): Promise<void> {
    try {
      const results = await this.write(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(results[i]));
    } catch (err) {
      if (batch.length === 1) {
        batch[0].reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.writeIsolated(batch.slice(0, half));
      await this.writeIsolated(batch.slice(half));
    }
  }
}
