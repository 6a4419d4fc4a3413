import { useCallback, useEffect, useRef, useState, type ReactNode } from 'react';
import { ApiError, type Problem } from '../api';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload: () => void;
}

/** Loads data for a page; `deps` change → load again. Errors keep the problem document. */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, loading: true }));
    fnRef.current().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error: asApiError(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export function asApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  return new ApiError({ title: 'Something went wrong', status: 0, detail: e instanceof Error ? e.message : String(e) });
}

export function Loading({ what = 'Loading…' }: { what?: string }) {
  return <p className="loading" role="status" aria-live="polite">{what}</p>;
}

/** The problem document's title and detail, as the server wrote them. */
export function ErrorState({ error, onRetry }: { error: ApiError | Problem; onRetry?: () => void }) {
  const p = error instanceof ApiError ? error.problem : error;
  return (
    <div className="error" role="alert">
      <strong>{p.title}</strong>
      <p>{p.detail}</p>
      {p.errors && p.errors.length > 0 && (
        <ul>{p.errors.map((e, i) => <li key={i}><code>{e.field}</code>: {e.message}</li>)}</ul>
      )}
      {onRetry && <button type="button" onClick={onRetry}>Try again</button>}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** Renders loading / error / content for a Loaded value. */
export function Show<T>({ loaded, children }: { loaded: Loaded<T>; children: (data: T) => ReactNode }) {
  if (loaded.error) return <ErrorState error={loaded.error} onRetry={loaded.reload} />;
  if (loaded.data === undefined) return <Loading />;
  return <>{children(loaded.data)}</>;
}

export function CopyButton({ value, label = 'Copy', ariaLabel }: { value: string; label?: string; ariaLabel?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      className="copy"
      aria-label={ariaLabel}
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(() => setDone(true), () => setDone(false));
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span className="muted">—</span>;
  const d = new Date(at);
  return <time dateTime={at} title={d.toISOString()}>{d.toLocaleString()}</time>;
}

export function Badge({ value }: { value: string }) {
  return <span className={`badge badge-${value.replace(/[^a-z_]/g, '')}`}>{value.replaceAll('_', ' ')}</span>;
}

/** Runs an action, keeping its busy state and its error (a problem document) for display. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const run = useCallback(async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await fn();
    } catch (e) {
      setError(asApiError(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}
