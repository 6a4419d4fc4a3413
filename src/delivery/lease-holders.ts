/**
 * Who holds a delivery lease. Lease holders are `host:pid:random`, one per delivery engine.
 * On its first cycle an engine releases the leases that earlier processes on the same host
 * left behind (their pid no longer runs, or it is this process's own pid under another engine
 * id, as after a container restart), so a restarted worker re-sends its predecessor's
 * in-flight messages at once instead of after the lease.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Pool } from '../db/pool.js';
import { releaseWorkerLeases, shapingLeaseHoldersOn } from '../db/queries/shaping.js';
import { leaseHoldersOn, releaseLeasesOf } from './queue.js';

/** Engines alive in this process: leases under this pid but another engine id are a dead predecessor's. */
const liveHolders = new Set<string>();

/** A new holder id, alive in this process until `holderGone`. */
export function newLeaseHolder(): string {
  const id = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  liveHolders.add(id);
  return id;
}

export function holderGone(id: string): void {
  liveHolders.delete(id);
}

/** Releases the message and shaping leases of dead predecessors of `self` on this host. Returns how many messages. */
export async function releaseDeadLeases(pool: Pool, self: string, now: Date, log: Logger): Promise<number> {
  const host = self.slice(0, self.indexOf(':') + 1);
  const holders = await leaseHoldersOn(pool, host);
  const dead = holders.filter((h) => h !== self && !isLeaseHolderAlive(h));
  // Their connection slots too, at once rather than when the shaping leases expire.
  const deadShapers = (await shapingLeaseHoldersOn(pool, host)).filter((h) => h !== self && !isLeaseHolderAlive(h));
  if (deadShapers.length > 0) await releaseWorkerLeases(pool, deadShapers);
  if (dead.length === 0) return 0;
  const n = await releaseLeasesOf(pool, dead, now);
  log.warn({ holders: dead, messages: n }, 'released the leases of a worker that is gone');
  return n;
}

/**
 * Whether the process holding a lease (on this host) may still run: its pid exists and is not
 * this process under an engine id that no longer lives here. A pid reused by an unrelated
 * process reads as alive; its leases then expire as usual.
 */
function isLeaseHolderAlive(holder: string): boolean {
  const pid = Number(holder.split(':')[1]);
  if (!Number.isInteger(pid) || pid <= 0) return true;
  if (pid === process.pid) return liveHolders.has(holder);
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
