import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for values needed on every request that must be unpredictable but are not
 * secrets (request ids): one randomFillSync per 4 KB instead of one call into the CSPRNG per
 * value (~2.5 µs each on this kind of machine, several per request on the send path). Keys,
 * tokens and anything secret keep calling node:crypto directly.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let offset = POOL_BYTES;

/** Where the next `bytes` fresh bytes start in the pool (refilled when short). */
function take(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < 1 || bytes > 256) throw new RangeError(`bytes must be 1 to 256, not ${bytes}`);
  if (offset + bytes > POOL_BYTES) {
    randomFillSync(pool);
    offset = 0;
  }
  const at = offset;
  offset += bytes;
  return at;
}

/** `bytes` fresh random bytes (at most 256) as lower-case hex; no byte is ever handed out twice. */
export function randomHex(bytes: number): string {
  const at = take(bytes);
  return pool.toString('hex', at, at + bytes);
}

/**
 * `bytes` fresh random bytes (at most 256), a view into the pool: read them before the next
 * call to this module (a refill overwrites them). No byte is ever handed out twice.
 */
export function randomView(bytes: number): Uint8Array {
  const at = take(bytes);
  return pool.subarray(at, at + bytes);
}
