import { PostlineError } from './errors.js';
import { OPERATIONS, type OperationId } from './generated/operations.js';
import { Paginated, type Page } from './pagination.js';
import type { Item, RequestOptions, Result } from './types.js';

export interface PostlineOptions {
  /** sk_live_… or sk_test_… (a test key is answered as a live one, with `sandbox: true`, and changes nothing). */
  apiKey: string;
  /** Where Postline serves its API, e.g. https://mail.example.com. Default http://localhost:3000. */
  baseUrl?: string;
  /** Each attempt's limit, in milliseconds. Default 30,000. */
  timeoutMs?: number;
  /** Retries after a 429, a 5xx, a timeout or a network failure. Default 2. */
  maxRetries?: number;
  /** A Retry-After longer than this (seconds) is not waited for: the error is thrown. Default 60. */
  maxRetryAfter?: number;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

/** What one call sends: path parameters, query, and a body (JSON, or text as CSV). */
export interface CallInput {
  path?: Record<string, string>;
  query?: object;
  body?: unknown;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

/** Exponential backoff with full jitter: up to 0.5 s, 1 s, 2 s … capped at 8 s. */
const backoffMs = (attempt: number) => Math.random() * Math.min(8000, 500 * 2 ** attempt);

/**
 * The transport under every resource: builds the URL from an operation's path, sends the key,
 * retries what is safe to retry and turns failures into PostlineError. Every POST carries an
 * Idempotency-Key, the same one on each retry of the call, so a send whose answer was lost
 * (a timeout, a 502 from a proxy after the server accepted it) is answered from the server's
 * record on the retry and never sent twice (docs/sdk.md).
 */
export class ApiClient {
  /** The operations a resource method calls: test/sdk checks them against the OpenAPI document. */
  readonly covered = new Set<OperationId>();
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;

  constructor(private readonly options: PostlineOptions) {
    if (!options.apiKey) throw new TypeError('Postline: apiKey is required');
    this.baseUrl = (options.baseUrl ?? 'http://localhost:3000').replace(/\/+$/, '');
    this.fetchFn = options.fetch ?? ((...args) => globalThis.fetch(...args));
  }

  /** A method for one operation; registering it is what counts as covering it. */
  operation<Id extends OperationId>(id: Id): (input?: CallInput, options?: RequestOptions) => Promise<Result<Id>> {
    this.covered.add(id);
    const [method, path] = OPERATIONS[id];
    return (input = {}, options) => this.request(method, path, input, options) as Promise<Result<Id>>;
  }

  /** A list operation as a Paginated: each page asked with the previous page's cursor. */
  list<Id extends OperationId>(id: Id): (input?: CallInput, options?: RequestOptions) => Paginated<Item<Id>> {
    const call = this.operation(id);
    return (input = {}, options) =>
      new Paginated((cursor) => call({ ...input, query: { ...input.query, ...(cursor ? { cursor } : {}) } }, options) as Promise<Page<Item<Id>>>);
  }

  private url(path: string, input: CallInput): string {
    const filled = path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = input.path?.[name];
      if (value === undefined || value === '') throw new TypeError(`Postline: ${name} is required`);
      return encodeURIComponent(value);
    });
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(input.query ?? {})) {
      if (v === undefined || v === null) continue;
      for (const item of Array.isArray(v) ? v : [v]) query.append(k, String(item));
    }
    const qs = query.toString();
    return `${this.baseUrl}${filled}${qs ? `?${qs}` : ''}`;
  }

  async request(method: string, path: string, input: CallInput, options: RequestOptions = {}): Promise<unknown> {
    const url = this.url(path, input);
    const headers: Record<string, string> = { authorization: `Bearer ${this.options.apiKey}`, accept: 'application/json, message/rfc822, */*' };
    let body: string | undefined;
    if (input.body !== undefined) {
      const csv = typeof input.body === 'string';
      headers['content-type'] = csv ? 'text/csv' : 'application/json';
      body = csv ? (input.body as string) : JSON.stringify(input.body);
    }
    if (method === 'POST') headers['idempotency-key'] = options.idempotencyKey ?? crypto.randomUUID();
    const maxRetries = this.options.maxRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? 30_000;
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
      let res: Response;
      try {
        res = await this.fetchFn(url, { method, headers, body, signal });
      } catch (err) {
        if (options.signal?.aborted) throw err;
        const error = timeout.aborted
          ? new PostlineError({ status: 0, code: 'timeout', title: 'Timeout', detail: `No answer from ${method} ${path} within ${timeoutMs} ms` })
          : new PostlineError({ status: 0, code: 'network_error', title: 'Network error', detail: `${method} ${path}: ${(err as Error).message}` });
        if (attempt >= maxRetries) throw error;
        await sleep(backoffMs(attempt), options.signal);
        continue;
      }
      if (res.ok) return parse(res);
      const error = await PostlineError.fromResponse(res);
      const retryable = res.status === 429 || res.status >= 500;
      if (!retryable || attempt >= maxRetries) throw error;
      if (error.retryAfter !== null && error.retryAfter > (this.options.maxRetryAfter ?? 60)) throw error;
      await sleep(error.retryAfter !== null ? error.retryAfter * 1000 : backoffMs(attempt), options.signal);
    }
  }
}

async function parse(res: Response): Promise<unknown> {
  if (res.status === 204) return undefined;
  const type = res.headers.get('content-type') ?? '';
  return /[/+]json\b/.test(type) ? res.json() : res.text();
}
