import type { ReactNode } from 'react';
import { Link, useSearchParams } from 'react-router';
import { get, qs, type Page } from '../api';
import { Empty, Show, useLoad, type Loaded } from './state';

/** One column of a list page: its header and how a row shows in it. */
export interface Column<T> {
  header: ReactNode;
  cell: (row: T) => ReactNode;
  className?: string;
}

/**
 * A page of a server-paginated collection whose cursor and filters live in the URL (so every
 * page of results has its own address): `path` is the collection route, `filters` the URL
 * parameters passed on to it.
 */
export function usePagedList<T>(path: string, filters: string[] = [], limit = 50): { loaded: Loaded<Page<T>>; params: URLSearchParams } {
  const [params] = useSearchParams();
  const values = Object.fromEntries(filters.map((f) => [f, params.get(f) ?? '']));
  const cursor = params.get('cursor');
  const query = qs({ ...values, cursor, limit });
  const loaded = useLoad(() => get<Page<T>>(`${path}${query}`), [path, query]);
  return { loaded, params };
}

/**
 * The list pages' shared skeleton: loading and error states, the empty state, the table, and
 * the server-side pager under it.
 */
export function PagedTable<T>({ loaded, columns, rowKey, empty, testId }: {
  loaded: Loaded<Page<T>>;
  columns: Column<T>[];
  rowKey: (row: T) => string;
  empty: ReactNode;
  testId?: string;
}) {
  return (
    <Show loaded={loaded}>
      {(page) => page.data.length === 0 ? <Empty>{empty}</Empty> : (
        <>
          <table data-testid={testId}>
            <thead><tr>{columns.map((c, i) => <th scope="col" key={i}>{c.header}</th>)}</tr></thead>
            <tbody>{page.data.map((row) => (
              <tr key={rowKey(row)}>{columns.map((c, i) => <td key={i} className={c.className}>{c.cell(row)}</td>)}</tr>
            ))}</tbody>
          </table>
          <Pager nextCursor={page.nextCursor} />
        </>
      )}
    </Show>
  );
}

/** Server-side pagination: the cursor lives in the URL, so every page has its own address. */
function Pager({ nextCursor }: { nextCursor: string | null }) {
  const [params] = useSearchParams();
  const current = params.get('cursor');
  if (!nextCursor && !current) return null;
  const next = new URLSearchParams(params);
  if (nextCursor) next.set('cursor', nextCursor);
  const first = new URLSearchParams(params);
  first.delete('cursor');
  return (
    <nav className="pager" aria-label="Pages">
      {current && <Link to={`?${first}`}>First page</Link>}
      {nextCursor && <Link to={`?${next}`} rel="next">Next page</Link>}
    </nav>
  );
}

/** A status filter that puts its choice in the URL (a new filter starts at the first page). */
export function StatusFilter({ id, statuses }: { id: string; statuses: readonly string[] }) {
  const [params, setParams] = useSearchParams();
  const status = params.get('status') ?? '';
  return (
    <form role="search" className="inline" onSubmit={(e) => { e.preventDefault(); const f = new FormData(e.currentTarget); setParams(qs({ status: String(f.get('status') ?? '') }).slice(1)); }}>
      <div>
        <label htmlFor={id}>Status</label>
        <select id={id} name="status" defaultValue={status}>
          <option value="">any</option>
          {statuses.map((s) => <option key={s}>{s}</option>)}
        </select>
      </div>
      <button type="submit">Filter</button>
    </form>
  );
}
