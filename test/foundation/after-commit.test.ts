import { test } from 'node:test';
import assert from 'node:assert/strict';
import { afterCommit, withTransaction } from '../../src/db/pool.js';
import { testDatabase } from '../helpers/db.js';

const { pool } = await testDatabase();

test('afterCommit: runs after COMMIT, with the pool; never when the transaction rolls back; at once on a pool', async () => {
  const calls: string[] = [];
  await withTransaction(pool, async (tx) => {
    afterCommit(tx, (p) => calls.push(p === pool ? 'committed' : 'wrong pool'));
    assert.deepEqual(calls, [], 'not before the commit');
  });
  assert.deepEqual(calls, ['committed']);
  await assert.rejects(withTransaction(pool, async (tx) => {
    afterCommit(tx, () => calls.push('rolled back'));
    throw new Error('boom');
  }));
  afterCommit(pool, () => calls.push('autocommit'));
  assert.deepEqual(calls, ['committed', 'autocommit']);
});
