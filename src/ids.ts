import { v7 as uuidv7 } from 'uuid';
import { randomView } from './lib/random-pool.js';

export type IdPrefix =
  | 'msg' | 'tpl' | 'lst' | 'sub' | 'seg' | 'cmp' | 'hook' | 'key' | 'dom' | 'evt' | 'aut'
  | 'sbx' | 'acc' | 'imp' | 'sup' | 'dlv' | 'rpt' | 'run' | 'usr';

/** The last id's millisecond and sequence: ids made in one millisecond count up from a random start. */
const last = { msecs: -Infinity, seq: 0 };
const bytes = Buffer.alloc(16);

/**
 * Public ids: a prefix and a UUIDv7 in hex. UUIDv7 starts with the millisecond time, so ids
 * sort by creation and serve as stable pagination cursors; the random tail makes them opaque.
 * Within a millisecond a 31-bit sequence (random at each new millisecond, then counting up)
 * keeps a process's ids in creation order, as uuid's own v7 state does. The random bytes come
 * from the process's pool (src/lib/random-pool.ts): one CSPRNG call per 256 ids instead of
 * one per id; uuid lays out the bytes into `bytes`, written out as hex without the dashes.
 */
export function newId(prefix: IdPrefix): string {
  const random = randomView(16);
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = ((random[6] & 0x7f) << 24) | (random[7] << 16) | (random[8] << 8) | random[9];
  } else {
    // The sequence wrapped: borrow the next millisecond, so order still holds.
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs++;
  }
  uuidv7({ random, msecs: last.msecs, seq: last.seq }, bytes);
  return `${prefix}_${bytes.toString('hex')}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(prefix + '_') && /^[a-z]+_[0-9a-f]{32}$/.test(id);
}
