/** One page of a list: `nextCursor` is null on the last page (docs: "Pagination"). */
export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

/**
 * A list that walks every page as it is iterated: `for await (const s of postline.subscribers.list())`.
 * `pages()` yields whole pages; `first()` fetches just the first. Nothing is fetched until asked.
 */
export class Paginated<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (cursor: string | undefined) => Promise<Page<T>>) {}

  first(): Promise<Page<T>> {
    return this.fetchPage(undefined);
  }

  async *pages(): AsyncGenerator<Page<T>, void, undefined> {
    let cursor: string | undefined;
    do {
      const page = await this.fetchPage(cursor);
      yield page;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page, in one array (for short lists). */
  async all(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) out.push(item);
    return out;
  }
}
