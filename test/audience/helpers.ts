import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';

export type Headers = Record<string, string>;

/** Small JSON client over app.inject for the audience tests. */
export function client(app: FastifyInstance, headers: Headers) {
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
    return { status: res.statusCode, body: (res.body ? res.json() : null) as Json, headers: res.headers };
  };
  return {
    get: (url: string) => call('GET', url),
    post: (url: string, payload: unknown) => call('POST', url, payload),
    patch: (url: string, payload: unknown) => call('PATCH', url, payload),
    delete: (url: string) => call('DELETE', url),
  };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** Creates a list and returns its id. */
export async function makeList(app: FastifyInstance, headers: Headers, body: Record<string, unknown> = {}): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/lists', headers, payload: { name: 'List', ...body } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

/** Creates (or upserts) a subscriber and returns the response body. */
export async function makeSubscriber(app: FastifyInstance, headers: Headers, body: Record<string, unknown>): Promise<Json> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/subscribers', headers, payload: body });
  assert.ok(res.statusCode === 201 || res.statusCode === 200, res.body);
  return res.json();
}

/** Every page of a list endpoint, following nextCursor. */
export async function allPages(app: FastifyInstance, headers: Headers, url: string): Promise<Json[]> {
  const out: Json[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const sep = url.includes('?') ? '&' : '?';
    const target: string = cursor ? `${url}${sep}cursor=${cursor}` : url;
    const res = await app.inject({ url: target, headers });
    assert.equal(res.statusCode, 200, res.body);
    const body: Json = res.json();
    out.push(...body.data);
    cursor = body.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('too many pages');
}
