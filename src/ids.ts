import { fillRandom } from './lib/random-pool.js';

export type IdPrefix =
  | 'msg' | 'tpl' | 'lst' | 'sub' | 'seg' | 'cmp' | 'hook' | 'key' | 'dom' | 'evt' | 'aut'
  | 'sbx' | 'acc' | 'imp' | 'sup' | 'dlv' | 'rpt' | 'run' | 'usr';

/**
 * UUIDv7s (RFC 9562) as 32 hex digits, laid out exactly as the `uuid` package's v7() lays them
 * out: 48 bits of Unix milliseconds, then a 32-bit counter seeded from random bits whenever the
 * millisecond moves forward and incremented otherwise (so ids of one process sort in creation
 * order even within a millisecond, and a clock that steps back never reorders them), then random
 * bits. Written here rather than called from `uuid` because its generator asks the CSPRNG for 16
 * bytes per id (crypto.getRandomValues, several µs each, two ids per accepted send); this one
 * draws them from the process's random pool (lib/random-pool.ts). test/foundation/ids.test.ts
 * proves it byte-identical to `uuid`'s v7 given the same clock and random bytes.
 */
export function createUuidV7Hex(now: () => number = Date.now, fill: (target: Uint8Array) => Uint8Array = fillRandom): () => string {
  let msecs = -Infinity;
  let seq = 0;
  const rnds = new Uint8Array(16);
  const out = Buffer.alloc(16);
  return () => {
    const t = now();
    fill(rnds);
    if (t > msecs) {
      seq = ((rnds[6] & 0x7f) << 24) | (rnds[7] << 16) | (rnds[8] << 8) | rnds[9];
      msecs = t;
    } else {
      seq = (seq + 1) | 0;
      if (seq === 0) msecs++;
    }
    out[0] = (msecs / 0x10000000000) & 0xff;
    out[1] = (msecs / 0x100000000) & 0xff;
    out[2] = (msecs / 0x1000000) & 0xff;
    out[3] = (msecs / 0x10000) & 0xff;
    out[4] = (msecs / 0x100) & 0xff;
    out[5] = msecs & 0xff;
    out[6] = 0x70 | ((seq >>> 28) & 0x0f);
    out[7] = (seq >>> 20) & 0xff;
    out[8] = 0x80 | ((seq >>> 14) & 0x3f);
    out[9] = (seq >>> 6) & 0xff;
    out[10] = ((seq << 2) & 0xff) | (rnds[10] & 0x03);
    for (let i = 11; i < 16; i++) out[i] = rnds[i];
    return out.toString('hex');
  };
}

const uuidV7Hex = createUuidV7Hex();

/**
 * Public ids: a prefix and a UUIDv7 in hex. UUIDv7 starts with the millisecond time, so ids
 * sort by creation and serve as stable pagination cursors; the random tail makes them opaque.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${uuidV7Hex()}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(prefix + '_') && /^[a-z]+_[0-9a-f]{32}$/.test(id);
}
