import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../src/db/pool.js';

export type Headers = Record<string, string>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** JSON calls through app.inject. */
export function api(app: FastifyInstance, headers: Headers) {
  const call = async (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) => {
    const res = await app.inject({ method, url, headers, ...(payload !== undefined ? { payload: payload as object } : {}) });
    return { status: res.statusCode, body: (res.body ? res.json() : null) as Json };
  };
  return {
    get: (url: string) => call('GET', url),
    post: (url: string, payload: unknown = {}) => call('POST', url, payload),
    patch: (url: string, payload: unknown) => call('PATCH', url, payload),
    delete: (url: string) => call('DELETE', url),
  };
}

/** A list with `count` active subscribers `<prefix>N@<domain>`, written in one statement each. */
export async function seedList(
  app: FastifyInstance,
  pool: Pool,
  headers: Headers,
  accountId: string,
  opts: { count: number; prefix?: string; domain: string; name?: string },
): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/lists', headers, payload: { name: opts.name ?? 'Newsletter' } });
  assert.equal(res.statusCode, 201, res.body);
  const listId = res.json().id as string;
  const prefix = opts.prefix ?? 'reader';
  await pool.query(
    `WITH s AS (
       INSERT INTO subscribers (id, account_id, email, email_key, name, status, attributes, created_at, updated_at)
       SELECT 'sub_' || replace(gen_random_uuid()::text, '-', ''), $1, $2 || g || '@' || $3, $2 || g || '@' || $3,
              'Reader ' || g, 'active', jsonb_build_object('plan', CASE WHEN g % 2 = 0 THEN 'pro' END), now(), now()
         FROM generate_series(1, $4::int) g
       RETURNING id)
     INSERT INTO subscriber_lists (list_id, subscriber_id, account_id, created_at) SELECT $5, id, $1, now() FROM s`,
    [accountId, prefix, opts.domain, opts.count, listId],
  );
  return listId;
}

export function campaignBody(listId: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'November news',
    subject: 'News for {{ subscriber.name | you }}',
    from: { email: 'news@acme.test', name: 'Acme' },
    html: '<p>Hi {{ subscriber.name | there }} ({{ subscriber.email }}), plan {{ subscriber.attributes.plan | free }}. {{ greeting }}</p>' +
      '<p><a href="https://acme.test/a">A</a> <a href="https://acme.test/b">B</a></p>',
    variables: { greeting: 'Cheers' },
    audience: { lists: [listId] },
    ...over,
  };
}
