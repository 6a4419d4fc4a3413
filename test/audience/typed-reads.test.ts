import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MIN_SERVER_VERSION_NUM, assertSupportedServer, unsupportedServerReason } from '../../src/db/server-version.js';
import { testDatabase } from '../helpers/db.js';

/**
 * Segment comparisons read attribute text through audience_numeric / audience_timestamptz
 * (migration 003): PostgreSQL 16+ asks pg_input_is_valid, 15 runs the cast in a block that
 * catches its error (docs/decisions/0028-postgresql-versions.md). Both must give the same
 * answers. CI runs this file on the embedded PostgreSQL 18 and on Debian's PostgreSQL 15.
 */
const { pool } = await testDatabase();
const serverVersion = Number((await pool.query(`SELECT current_setting('server_version_num') AS v`)).rows[0].v);

const NUMERIC_INPUTS = [
  '1', '-1.5', '+.5', '5.', '1e3', '1E-3', ' 42 ', '007', 'NaN', 'nan', 'Infinity', '-inf', '+Infinity',
  '', ' ', 'abc', '1.2.3', '1e', 'e5', '--1', '12abc', '1,5', '١٢٣', '1 2', '.', '+', '1e1000000',
  '9'.repeat(400), '0.' + '0'.repeat(300) + '1', '1_000', '0x1F', '0b101', '0o17', '_1', '1__0',
];
const DATE_INPUTS = [
  '2024-01-15', '2024-01-15T10:00:00Z', '2024-01-15 10:00:00.123456+02:00', '2024-01-15T10:00:00+05:30',
  '2024-02-29', '2023-02-29', '2024-02-30', '2024-13-01', '2024-00-10', '2024-01-15 25:00', '2024-01-15T10:61:00',
  '2024-01-15garbage', '2024-01-15 BC', '0000-01-01', '9999-12-31T23:59:59Z', '20240115', '2024-1-1',
  'infinity', 'epoch', 'allballs', '', '99999-01-01', '2024-01-15T10:00:00 Europe/Paris', '2024-01-15T10:00:00 Mars/Base',
];

/** Answers of the installed functions and of both variants, for each input (NULL included). */
async function answers(fn: 'numeric' | 'timestamptz', inputs: string[]) {
  const guard = fn === 'timestamptz' ? `substr(v, 5, 1) = '-' AND substr(v, 8, 1) = '-' AND ` : '';
  const modern = serverVersion >= 160000
    ? `CASE WHEN ${guard}pg_input_is_valid(v, '${fn}') THEN v::${fn} END::text`
    : 'NULL::text';
  const { rows } = await pool.query(
    `SELECT v, audience_${fn}(v)::text AS installed,
            CASE WHEN ${guard}true THEN audience_try_${fn}(v) END::text AS v15, ${modern} AS v16
       FROM unnest($1::text[]) AS t(v)`,
    [[...inputs, null]],
  );
  return rows as { v: string | null; installed: string | null; v15: string | null; v16: string | null }[];
}

test('typed reads: the PostgreSQL 15 variant and the pg_input_is_valid variant give the same answers', async (t) => {
  for (const fn of ['numeric', 'timestamptz'] as const) {
    for (const r of await answers(fn, fn === 'numeric' ? NUMERIC_INPUTS : DATE_INPUTS)) {
      assert.equal(r.installed, r.v15, `${fn} ${JSON.stringify(r.v)}`);
      if (serverVersion >= 160000) assert.equal(r.v16, r.v15, `${fn} ${JSON.stringify(r.v)}`);
    }
  }
  if (serverVersion < 160000) t.diagnostic('PostgreSQL 15: pg_input_is_valid does not exist; the 15 variant is checked against fixed answers');
});

test('typed reads: fixed answers that hold on every supported version', async () => {
  const num = new Map((await answers('numeric', NUMERIC_INPUTS)).map((r) => [r.v, r.installed]));
  assert.equal(num.get('-1.5'), '-1.5');
  assert.equal(num.get(' 42 '), '42');
  assert.equal(num.get('1e3'), '1000');
  assert.equal(num.get('NaN'), 'NaN');
  assert.equal(num.get('-inf'), '-Infinity');
  for (const bad of ['', 'abc', '1.2.3', '1e', '12abc', '1,5', '1e1000000', '_1']) assert.equal(num.get(bad), null, bad);
  assert.equal(num.get(null), null);
  const date = new Map((await answers('timestamptz', DATE_INPUTS)).map((r) => [r.v, r.installed]));
  assert.ok(date.get('2024-01-15T10:00:00Z')?.startsWith('2024-01-15'));
  assert.ok(date.get('2024-02-29'));
  for (const bad of ['2023-02-29', '2024-02-30', '2024-13-01', '2024-01-15 25:00', '2024-01-15garbage', '20240115', 'epoch', 'infinity', '2024-01-15T10:00:00 Mars/Base']) {
    assert.equal(date.get(bad), null, bad);
  }
});

test('typed reads: the variant is chosen by server_version_num', async () => {
  const { rows } = await pool.query(`SELECT proname, prosrc, proparallel FROM pg_proc WHERE proname IN ('audience_numeric', 'audience_timestamptz')`);
  assert.equal(rows.length, 2);
  for (const r of rows) {
    if (serverVersion >= 160000) {
      assert.match(r.prosrc, /pg_input_is_valid/, r.proname);
      assert.equal(r.proparallel, 's', r.proname);
    } else {
      assert.match(r.prosrc, /audience_try_/, r.proname);
      assert.equal(r.proparallel, 'u', r.proname); // a parallel worker cannot start the subtransaction
    }
  }
});

test('typed reads: a segment-style count stays correct when the planner is pushed to a parallel plan', async () => {
  const parallelSetting = serverVersion >= 160000 ? 'debug_parallel_query' : 'force_parallel_mode';
  // A plain table: parallel workers cannot read a temporary one.
  await pool.query(`CREATE TABLE typed_values AS
    SELECT g::text AS n, '2024-01-' || lpad(((g % 40) + 1)::text, 2, '0') AS d FROM generate_series(1, 4000) g
    UNION ALL SELECT 'x' || g, 'y' || g FROM generate_series(1, 1000) g`);
  await pool.query('ANALYZE typed_values');
  const c = await pool.connect();
  let counts;
  try {
    for (const s of [`${parallelSetting} = on`, 'parallel_setup_cost = 0', 'parallel_tuple_cost = 0', 'min_parallel_table_scan_size = 0']) {
      await c.query(`SET ${s}`);
    }
    const { rows } = await c.query(`SELECT count(*) FILTER (WHERE audience_numeric(n) > 2000) AS n,
      count(audience_timestamptz(d)) AS d FROM typed_values`);
    counts = rows[0];
  } finally {
    c.release(true); // the session's settings go with the connection
  }
  assert.equal(counts.n, 2000);
  assert.equal(counts.d, 4000 - 900); // days 32..40 of January are not dates: 9 of every 40 rows
});

test('start-up: a server older than PostgreSQL 15 is refused, naming the version found and the one needed', async () => {
  assert.equal(MIN_SERVER_VERSION_NUM, 150000);
  const reason = unsupportedServerReason(140012, '14.12 (Debian 14.12-1)');
  assert.match(reason ?? '', /PostgreSQL 14\.12 \(Debian 14\.12-1\)/);
  assert.match(reason ?? '', /needs PostgreSQL 15 or later/);
  assert.equal(unsupportedServerReason(150018, '15.18'), undefined);
  assert.equal(unsupportedServerReason(180001, '18.1'), undefined);
  await assertSupportedServer(pool); // the server this suite runs on is supported
});
