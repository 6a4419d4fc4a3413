import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listCaptured } from '../../src/db/queries/captured.js';
import { listMessages } from '../../src/db/queries/messages.js';
import type { Queryable } from '../../src/db/pool.js';
import { testDatabase } from '../helpers/db.js';

/**
 * The page size of GET /emails and GET /captured was written into the SQL
 * text. Every value reaches SQL as a parameter: the statements seen by PostgreSQL hold no
 * trace of the limit, and a value that is not an integer is refused by PostgreSQL's typing.
 */
const { pool } = await testDatabase();

function recording(): { db: Queryable; texts: string[]; params: unknown[][] } {
  const texts: string[] = [];
  const params: unknown[][] = [];
  const db = {
    query: (text: string, values: unknown[]) => {
      texts.push(text);
      params.push(values);
      return pool.query(text, values);
    },
  } as unknown as Queryable;
  return { db, texts, params };
}

const page = (limit: unknown) => ({ where: 'TRUE', orderBy: 'id DESC', params: [], limit: limit as number });

test('sql params: the page size of the messages and captured lists is a parameter, not SQL text', async () => {
  const r = recording();
  await listMessages(r.db, 'acc_x', {}, page(4242));
  await listCaptured(r.db, 'acc_x', page(4242));
  for (const [i, text] of r.texts.entries()) {
    assert.ok(!text.includes('4243'), `limit in the SQL text: ${text}`);
    assert.ok(r.params[i].includes(4243), 'limit + 1 among the parameters');
  }
});

test('sql params: a page size that is not an integer fails as a typed parameter and runs nothing else', async () => {
  for (const list of [(db: Queryable) => listMessages(db, 'acc_x', {}, page('1; DROP TABLE messages')), (db: Queryable) => listCaptured(db, 'acc_x', page('1; DROP TABLE captured_messages'))]) {
    await assert.rejects(list(pool), /invalid input syntax for type integer/);
  }
  const { rows } = await pool.query(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename IN ('messages', 'captured_messages')`);
  assert.equal(rows[0].n, 2);
});
