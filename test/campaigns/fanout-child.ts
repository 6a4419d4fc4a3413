/**
 * A fan-out worker in a process of its own, for the kill -9 test: fans out whatever campaign is
 * waiting in DATABASE_URL in small batches and prints a line after each committed batch.
 */
import { createPool } from '../../src/db/pool.js';
import { runFanOut } from '../../src/domain/campaigns/fanout.js';

const pool = createPool(process.env.DATABASE_URL!, 2);
let batches = 0;
await runFanOut({
  pool,
  now: () => new Date(),
  quotaOf: async () => null,
  batchSize: Number(process.env.FANOUT_BATCH ?? 20),
  onBatch: (_id, n) => process.stdout.write(`batch ${++batches} ${n}\n`),
});
process.stdout.write('done\n');
await pool.end();
