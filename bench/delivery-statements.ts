/**
 * bench/delivery-statements: the delivery path's two statements in PostgreSQL alone, without
 * workers, SMTP or the API's requests — what `bench:delivery`'s `postgres … ms per delivered
 * message` is mostly made of (docs/decisions/0056-postgres-and-idle-cores.md). `--messages`
 * queued transactional messages (the order mail's HTML, each with its `sent` event, as an
 * accept leaves them) are claimed `--claim` at a time (the transactional claim,
 * claimDueMessages) and recorded delivered `--group` at a time (recordOutcomes), each
 * statement on its own connection. Prints the CPU time of each connection's backend per
 * message (/proc: user + system), which a loaded machine inflates much less than wall time,
 * and the WAL written per message.
 *
 * `--claim-plan-cache-mode force_generic_plan` runs the claim's connection with that setting;
 * `--explain` prints each stream's claim planned both ways (EXPLAIN ANALYZE, rolled back) over
 * the first run's queued rows.
 *
 *   npm run bench:delivery-statements -- [--messages 6000] [--claim 35] [--group 38] [--runs 3] [--tags 0]
 *     [--claim-plan-cache-mode auto|force_generic_plan|force_custom_plan] [--explain]
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createAccount } from '../src/domain/accounts.js';
import { claimDueMessages, recordOutcomes } from '../src/delivery/queue.js';
import { newId } from '../src/ids.js';
import { ORDER_HTML } from './lib/order-mail.js';
import { startCluster } from './lib/server.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '6000' },
    claim: { type: 'string', default: '35' },
    group: { type: 'string', default: '38' },
    runs: { type: 'string', default: '3' },
    tags: { type: 'string', default: '0' },
    // Diagnostics: the claim's connection with this plan_cache_mode; its plans printed before the first run.
    'claim-plan-cache-mode': { type: 'string' },
    explain: { type: 'boolean', default: false },
  },
});
const total = Number(values.messages);
const claimSize = Number(values.claim);
const groupSize = Number(values.group);
const tags = Array.from({ length: Number(values.tags) }, (_, i) => `tag${i}`);
const load = () => `load average ${loadavg().map((l) => l.toFixed(2)).join(', ')}`;

/** A backend's CPU so far, in ms (utime + stime of /proc/PID/stat, in clock ticks of 10 ms). */
function backendCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const cluster = await startCluster(['api']);
const pool = cluster.db.pool;
try {
  const account = await createAccount(pool, { name: 'bench' });
  const claimer = await pool.connect();
  const recorder = await pool.connect();
  const pidOf = async (c: typeof claimer) => Number((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
  const [claimPid, recordPid] = [await pidOf(claimer), await pidOf(recorder)];
  // The triggers' own time (functions' wall time in the recording backend; pg_stat_user_functions).
  await recorder.query(`SET track_functions = 'pl'`);
  const functionMs = async () => {
    await recorder.query('SELECT pg_stat_force_next_flush()');
    await recorder.query('SELECT 1');
    const { rows } = await pool.query(`SELECT funcname, self_time FROM pg_stat_user_functions ORDER BY funcname`);
    return new Map(rows.map((r) => [r.funcname as string, Number(r.self_time)]));
  };
  const wal = async () => Number((await pool.query(`SELECT pg_current_wal_lsn() - '0/0'::pg_lsn AS b`)).rows[0].b);
  process.stdout.write(`${total} messages per run, claims of ${claimSize}, outcome groups of ${groupSize}, ${tags.length} tags, node ${process.version}\n`);
  for (let run = 1; run <= Number(values.runs); run++) {
    const now = new Date();
    await pool.query(
      `WITH m AS (
         INSERT INTO messages (id, account_id, status, from_email, from_name, to_email, to_domain, subject, html, tags, next_attempt_at, created_at)
         SELECT 'msg_' || $2 || lpad(g::text, 8, '0'), $1, 'queued', 'orders@bench.test', 'Bench', 'r' || g || '@example.net', 'example.net',
                'Order ' || g, $3, $5::text[], $4, $4
           FROM generate_series(1, $6::int) g
         RETURNING id, account_id, to_email)
       INSERT INTO events (id, account_id, message_id, type, email, data, occurred_at)
       SELECT 'evt_' || substr(id, 5), account_id, id, 'sent', to_email, '{}', $4 FROM m`,
      [account.id, `r${run}_${Date.now()}_`, ORDER_HTML, now, tags, total],
    );
    await pool.query('ANALYZE messages');
    await pool.query('ANALYZE events');
    if (values['claim-plan-cache-mode']) await claimer.query(`SELECT set_config('plan_cache_mode', $1, false)`, [values['claim-plan-cache-mode']]);
    if (values.explain && run === 1) {
      // Each stream's claim, prepared on this connection by a claim of nothing (a limit of 0), then
      // run under EXPLAIN ANALYZE with custom and with generic plans, each in a transaction rolled back.
      for (const stream of ['transactional', 'campaign'] as const) {
        await claimDueMessages(claimer, 'bench-worker', new Date(), 0, 60_000, { stream });
        for (const mode of ['force_custom_plan', 'force_generic_plan']) {
          await claimer.query('BEGIN');
          await claimer.query(`SELECT set_config('plan_cache_mode', $1, true)`, [mode]);
          const plan = (await claimer.query(
            `EXPLAIN (ANALYZE, BUFFERS) EXECUTE "postline-claim-${stream}"('bench-worker', now(), ${claimSize}, 60000, '{}', '{}', '{}')`,
          )).rows.map((r) => r['QUERY PLAN']).join('\n');
          await claimer.query('ROLLBACK');
          process.stdout.write(`claim ${stream} (${mode}):\n${plan}\n`);
        }
      }
    }
    const wal0 = await wal();
    const f0 = await functionMs();
    let claimCpu = 0;
    let recordCpu = 0;
    let claims = 0;
    let records = 0;
    let pending: Awaited<ReturnType<typeof claimDueMessages>> = [];
    let recorded = 0;
    const record = async (rows: typeof pending) => {
      const at = new Date();
      const c0 = backendCpuMs(recordPid);
      await recordOutcomes(recorder, 'bench-worker', [], rows.map((m) => ({
        outcome: { id: m.id, status: 'delivered', nextAttemptAt: at, response: '250 2.0.0 Ok: queued', mx: 'mx.example.net', deliveredAt: at },
        source: null,
        event: { id: newId('evt'), accountId: m.account_id, type: 'delivered', email: m.to_email, data: { response: '250 2.0.0 Ok: queued', mx: 'mx.example.net', attempt: 1 }, occurredAt: at },
      })));
      recordCpu += backendCpuMs(recordPid) - c0;
      records++;
      recorded += rows.length;
    };
    for (;;) {
      const c0 = backendCpuMs(claimPid);
      const rows = await claimDueMessages(claimer, 'bench-worker', new Date(), claimSize, 60_000, { stream: 'transactional' });
      claimCpu += backendCpuMs(claimPid) - c0;
      claims++;
      if (rows.length === 0) break;
      pending.push(...rows);
      while (pending.length >= groupSize) await record(pending.splice(0, groupSize));
    }
    if (pending.length > 0) await record(pending);
    pending = [];
    const walBytes = (await wal()) - wal0;
    const f1 = await functionMs();
    const triggers = [...f1].map(([name, ms]) => [name, ms - (f0.get(name) ?? 0)] as const).filter(([, ms]) => ms > 0)
      .map(([name, ms]) => `${name} ${(ms / recorded).toFixed(4)}`).join(', ');
    // How each connection ran its prepared statement: planned per call (custom) or once (generic).
    const plans = async (c: typeof claimer) =>
      (await c.query(`SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'postline-%' ORDER BY name`)).rows
        .map((r) => `${r.name} ${r.generic_plans} generic / ${r.custom_plans} custom`).join(', ');
    process.stdout.write(
      `run ${run}  record ${(recordCpu / recorded).toFixed(3)} ms per message (${records} statements, ${(recordCpu / records).toFixed(2)} ms each); ` +
        `claim ${(claimCpu / recorded).toFixed(3)} ms per message (${claims} statements, ${(claimCpu / claims).toFixed(2)} ms each); ` +
        `wal ${(walBytes / recorded / 1024).toFixed(2)} KB per message (${load()})\n` +
        `triggers ms per message (wall, in the recording backend): ${triggers}\n` +
        `plans  ${await plans(claimer)}; ${await plans(recorder)}\n`,
    );
  }
  claimer.release();
  recorder.release();
} finally {
  await cluster.stop();
}
