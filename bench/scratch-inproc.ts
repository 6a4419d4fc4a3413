// scratch: the accept path in-process (inject), CPU per request, quiet profile possible
import { startCluster } from './lib/server.js';
import { ORDER_HTML, orderSender } from './lib/order-mail.js';
const { buildApp } = await import('../dist/http/app.js');
const { openDatabase } = await import('../dist/db/open.js');
const cluster = await startCluster(['api']);
const key = await orderSender(cluster);
const db = await openDatabase(cluster.config, { owner: false, poolSize: 8, migrate: false });
const app = await buildApp({ config: cluster.config, pool: db.pool, relaxedPool: db.relaxedPool, clock: { now: () => new Date() } }, { logger: process.env.NOLOG ? false : undefined });
await app.ready();
const floor = process.argv.includes('--floor');
async function run(from: number, n: number) {
  let next = from;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < from + n) {
      const i = next++;
      const res = floor ? await app.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${key}` } })
        : await app.inject({ method: 'POST', url: '/api/v1/emails', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: JSON.stringify({ to: `user${i}@example.net`, from: { email: 'shop@bench.test', name: 'Shop' }, subject: 'Order {{ order }} shipped', html: ORDER_HTML, variables: { name: `User ${i}`, order: `A-${i}` } }) });
      if (res.statusCode !== (floor ? 200 : 202)) throw new Error(res.body);
    }
  }));
}
await run(0, 1000);
const N = Number(process.env.N ?? 6000);
for (let r = 0; r < Number(process.env.ROUNDS ?? 2); r++) {
  const c0 = process.cpuUsage(); const t0 = Date.now();
  await run(1000 + r * N, N);
  const c = process.cpuUsage(c0);
  console.log(`in-process ${floor ? 'floor' : 'accept'}: ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU per request (user ${(c.user / 1000 / N).toFixed(3)}, system ${(c.system / 1000 / N).toFixed(3)}), ${(N / ((Date.now() - t0) / 1000)).toFixed(0)}/s`);
}
await app.close(); await db.close?.(); await cluster.stop();
