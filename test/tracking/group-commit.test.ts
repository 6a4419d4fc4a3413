import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit } from '../../src/db/group-commit.js';

function deferred() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return { gate, release };
}

test('group commit: alone, an item is written at once; items arriving during a write go together in the next', async () => {
  const batches: number[][] = [];
  const first = deferred();
  const gc = new GroupCommit<number, number>(
    async (items) => {
      batches.push(items);
      if (batches.length === 1) await first.gate;
      return items.map((i) => i * 10);
    },
    { maxBatch: 500, maxInFlight: 1 },
  );
  const a = gc.submit(1);
  const rest = [2, 3, 4].map((i) => gc.submit(i));
  assert.deepEqual(batches, [[1]], 'the first is not held back');
  first.release();
  assert.deepEqual(await Promise.all([a, ...rest]), [10, 20, 30, 40]);
  assert.deepEqual(batches, [[1], [2, 3, 4]]);
});

test('group commit: batches are capped, and at most maxInFlight writes run at once', async () => {
  let running = 0;
  let peak = 0;
  const sizes: number[] = [];
  const gc = new GroupCommit<number, number>(
    async (items) => {
      running++;
      peak = Math.max(peak, running);
      sizes.push(items.length);
      await new Promise((r) => setTimeout(r, 5));
      running--;
      return items;
    },
    { maxBatch: 3, maxInFlight: 2 },
  );
  const out = await Promise.all(Array.from({ length: 20 }, (_, i) => gc.submit(i)));
  assert.deepEqual(out, Array.from({ length: 20 }, (_, i) => i));
  assert.equal(peak, 2);
  assert.ok(sizes.every((n) => n <= 3), sizes.join(','));
});

test('group commit: when the database fails every write, each item of the batch is rejected with the error, and later batches still run', async () => {
  let calls = 0;
  let down = false;
  const first = deferred();
  const gc = new GroupCommit<number, number>(async (items) => {
    calls++;
    const failing = down;
    if (calls === 1) await first.gate;
    if (failing) throw new Error('db down');
    return items;
  }, { maxBatch: 10, maxInFlight: 1 });
  const ok = gc.submit(0);
  const failed = [gc.submit(1), gc.submit(2)];
  down = true;
  first.release();
  assert.equal(await ok, 0);
  await assert.rejects(failed[0], /db down/);
  await assert.rejects(failed[1], /db down/);
  down = false;
  assert.equal(await gc.submit(3), 3);
});

test('group commit: a write failing because of one item fails only that item; the others are written without it', async () => {
  const first = deferred();
  const writes: number[][] = [];
  const stored: number[] = [];
  const gc = new GroupCommit<number, number>(async (items) => {
    writes.push(items);
    if (writes.length === 1) await first.gate;
    if (items.includes(13)) throw new Error('item 13 is bad');
    stored.push(...items);
    return items.map((i) => i * 2);
  }, { maxBatch: 500, maxInFlight: 1 });
  const head = gc.submit(0);
  const rest = Array.from({ length: 40 }, (_, i) => gc.submit(i + 1));
  first.release();
  assert.equal(await head, 0);
  const settled = await Promise.allSettled(rest);
  settled.forEach((r, i) => {
    if (i + 1 === 13) assert.equal(r.status, 'rejected');
    else assert.deepEqual(r, { status: 'fulfilled', value: (i + 1) * 2 });
  });
  assert.deepEqual(stored.sort((a, b) => a - b), Array.from({ length: 41 }, (_, i) => i).filter((i) => i !== 13));
  assert.ok(writes.length <= 2 + 2 * Math.ceil(Math.log2(40)), `${writes.length} writes: bisected, not one per item`);
});

test('group commit with keyOf: items of one key never go into overlapping writes and keep their order; other keys pass them', async () => {
  const gates: ReturnType<typeof deferred>[] = [];
  const writes: string[][] = [];
  const committed: string[] = [];
  const gc = new GroupCommit<string, string>(async (items) => {
    writes.push(items);
    const gate = deferred();
    gates.push(gate);
    await gate.gate;
    committed.push(...items);
    return items;
  }, { maxBatch: 10, maxInFlight: 2, keyOf: (item) => item[0] });
  const a1 = gc.submit('a1');
  const rest = ['a2', 'b1', 'a3', 'c1'].map((i) => gc.submit(i));
  // a1 is in the first write; the second may run beside it, but without a2.
  assert.deepEqual(writes, [['a1'], ['b1']]);
  gates[1].release();
  await rest[1];
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(writes[2], ['c1'], 'c1 passes a2 and a3, which wait for a1');
  gates[2].release();
  await rest[3];
  assert.equal(writes.length, 3, 'a2 still waits for a1');
  gates[0].release();
  await a1;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(writes[3], ['a2', 'a3'], 'once a1 is committed, a2 and a3 go together, in order');
  gates[3].release();
  assert.deepEqual(await Promise.all([a1, ...rest]), ['a1', 'a2', 'b1', 'a3', 'c1']);
  assert.deepEqual(committed.filter((i) => i[0] === 'a'), ['a1', 'a2', 'a3']);
});

test('group commit with gather: a short batch waits for more (up to its time), a batch of upTo goes at once', async () => {
  const batches: number[][] = [];
  const gc = new GroupCommit<number, number>(
    async (items) => {
      batches.push(items);
      return items.map((i) => i * 10);
    },
    { maxBatch: 100, maxInFlight: 1, gather: { ms: 200, upTo: 3 } },
  );
  // upTo items: written together at once, no wait.
  const full = [1, 2, 3].map((i) => gc.submit(i));
  assert.deepEqual(batches, [[1, 2, 3]]);
  assert.deepEqual(await Promise.all(full), [10, 20, 30]);
  // Fewer: held back, and what arrives meanwhile joins them.
  const t0 = performance.now();
  const a = gc.submit(4);
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(batches, [[1, 2, 3]], 'a lone item waits for company');
  const b = gc.submit(5);
  assert.deepEqual(await Promise.all([a, b]), [40, 50]);
  assert.deepEqual(batches, [[1, 2, 3], [4, 5]]);
  assert.ok(performance.now() - t0 >= 150, 'written when its wait was over');
  // Reaching upTo while waiting ends the wait.
  const c = gc.submit(6);
  const d = gc.submit(7);
  await new Promise((r) => setTimeout(r, 10));
  const t1 = performance.now();
  const e = gc.submit(8);
  assert.deepEqual(await Promise.all([c, d, e]), [60, 70, 80]);
  assert.ok(performance.now() - t1 < 150, 'the third item ended the wait');
  assert.deepEqual(batches.at(-1), [6, 7, 8]);
});
