/** The dashboard's only way to the server: documented /api/v1 routes, with the session cookie and CSRF header. */
import type { operations } from '../../packages/sdk/src/generated/openapi';

export interface Problem {
  type?: string;
  title: string;
  status: number;
  detail: string;
  code?: string;
  errors?: { field: string; message: string }[];
  line?: number;
  column?: number;
  field?: string;
}

export class ApiError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(`${problem.title}: ${problem.detail}`);
    this.problem = problem;
  }
}

export interface Page<T> {
  data: T[];
  nextCursor: string | null;
}

let csrfToken: string | null = null;
const signedOutListeners = new Set<() => void>();

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export function onSignedOut(fn: () => void): () => void {
  signedOutListeners.add(fn);
  return () => signedOutListeners.delete(fn);
}

/** The readable hint cookie the server sets next to the HttpOnly session cookie (it holds no secret). */
export function hasSessionHint(): boolean {
  return document.cookie.split(';').some((c) => c.trim() === 'postline_signed_in=1');
}

/** One call, with the problem document thrown for an error answer; the answer itself otherwise. */
async function request(method: string, path: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch {
    throw new ApiError({ title: 'Network error', status: 0, detail: 'The server could not be reached. Check that Postline is running.' });
  }
  if (!res.ok) {
    const type = res.headers.get('content-type') ?? '';
    const data: unknown = type.includes('json') ? await res.json() : await res.text();
    const problem = (typeof data === 'object' && data ? data : { title: res.statusText, status: res.status, detail: String(data) }) as Problem;
    if (res.status === 401 && path !== '/session') signedOutListeners.forEach((fn) => fn());
    throw new ApiError(problem);
  }
  return res;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(method, path, body);
  if (res.status === 204) return undefined as T;
  const type = res.headers.get('content-type') ?? '';
  return (type.includes('json') ? await res.json() : await res.text()) as T;
}

/** A text answer (message/rfc822) with its headers, for routes that say something in a header. */
export async function getText(path: string): Promise<{ text: string; headers: Headers }> {
  const res = await request('GET', path);
  return { text: await res.text(), headers: res.headers };
}

export const get = <T>(path: string) => api<T>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body ?? {});
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path);

/** Builds a query string from the defined values only. */
export function qs(params: Record<string, string | number | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/*
 * The API's types, the SDK's (generated from the OpenAPI document by `npm run sdk:generate`;
 * the SDK's tests fail when they are not current), named by operationId: `Answer<'getCampaign'>` is what GET
 * /campaigns/{id} answers, `Item<'listApiKeys'>` one item of GET /keys's `data`.
 */
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON answer of an operation for a status (200 unless given). */
export type Answer<Op extends keyof operations, Status extends number = 200> =
  operations[Op]['responses'] extends infer Rs ? (Status extends keyof Rs ? JsonOf<Rs[Status]> : never) : never;
type DataItem<A> = A extends { data: (infer T)[] } ? T : never;
/** One item of a list operation's `data` (of the answer that has one, when it may be another). */
export type Item<Op extends keyof operations> = DataItem<Answer<Op>>;
