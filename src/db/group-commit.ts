/**
 * Group commit in the application: callers submit one item each and wait for it to be
 * written; whatever arrives while a write is in flight is written together by the next one.
 * Alone, a submission is written at once (no timer, no added latency); under load, batches
 * grow by themselves to match it, so N concurrent requests cost about N / batch commits
 * instead of N. That matters where each request is a tiny insert: a commit (WAL flush, and
 * NOTIFY's cluster-wide commit lock) costs far more than a row.
 *
 * Nothing is acknowledged before it is committed: `submit` resolves after the write of its
 * batch succeeded, and rejects with that write's error otherwise. Each process has its own
 * batches; no state outlives a write.
 */
export class GroupCommit<T, R> {
  private queue: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private inFlight = 0;

  /**
   * `write` stores a batch in one statement and returns one result per item, in order.
   * `maxInFlight` writes may run at once (the second overlaps the first's round trip).
   */
  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly opts: { maxBatch: number; maxInFlight: number } = { maxBatch: 500, maxInFlight: 2 },
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.opts.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.maxBatch);
      this.inFlight++;
      this.write(batch.map((b) => b.item))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i])),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.inFlight--;
          this.pump();
        });
    }
  }
}
