/**
 * A fan-out worker in a process of its own, for the kill -9 test: fans out whatever campaign is
 * waiting in DATABASE_URL in small batches, part after part as the worker's campaign loop does,
 * and prints a line after each committed batch.
 */
import { createPool } from '../../src/db/pool.js';
import { runFanOut } from '../../src/domain/campaigns/fanout.js';

const pool = createPool(process.env.DATABASE_URL!, 2);
let batches = 0;
const deps = {
  pool,
  now: () => new Date(),
  quotaOf: async () => null,
  batchSize: Number(process.env.FANOUT_BATCH ?? 20),
  onBatch: (_id: string, n: number) => process.stdout.write(`batch ${++batches} ${n}\n`),
};
// Started together with another: both begin when the test writes a line.
process.stdout.write('ready\n');
await new Promise((r) => process.stdin.once('data', r));
// Until every fan-out is finished: a worker that starts while another splits the audience finds
// nothing to claim yet (the campaign loop would be woken by the split's notification).
const unfinished = async () =>
  (await pool.query(`SELECT EXISTS (SELECT 1 FROM campaigns WHERE status = 'sending' AND NOT fanout_done) AS e`)).rows[0].e;
for (;;) {
  if ((await runFanOut(deps)) !== null) continue;
  if (!(await unfinished())) break;
  await new Promise((r) => setTimeout(r, 20));
}
process.stdout.write('done\n');
await pool.end();
