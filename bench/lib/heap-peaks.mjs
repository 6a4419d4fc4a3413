/**
 * Preloaded (`--import`) into the benchmarks' worker processes: samples V8's heap every 250 ms
 * and writes the peaks to $BENCH_HEAP_PEAKS_DIR/<pid>.json each second and at exit, so a
 * benchmark can print what a worker's resident memory is made of (young generation, old
 * generation, Buffers outside the heap; docs/decisions/0055-worker-young-generation.md).
 * Sampling costs a few microseconds per sample.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';

const dir = process.env.BENCH_HEAP_PEAKS_DIR;
if (dir) {
  const peaks = { newSpace: 0, oldSpace: 0, heapTotal: 0, external: 0, arrayBuffers: 0, heapSizeLimit: 0 };
  const sample = () => {
    for (const s of v8.getHeapSpaceStatistics()) {
      if (s.space_name === 'new_space') peaks.newSpace = Math.max(peaks.newSpace, s.space_size);
      if (s.space_name === 'old_space') peaks.oldSpace = Math.max(peaks.oldSpace, s.space_size);
    }
    const m = process.memoryUsage();
    peaks.heapTotal = Math.max(peaks.heapTotal, m.heapTotal);
    peaks.external = Math.max(peaks.external, m.external);
    peaks.arrayBuffers = Math.max(peaks.arrayBuffers, m.arrayBuffers);
    peaks.heapSizeLimit = v8.getHeapStatistics().heap_size_limit;
  };
  const write = () => {
    sample();
    try {
      writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(peaks));
    } catch {
      /* the bench's directory is gone: it has finished */
    }
  };
  setInterval(sample, 250).unref();
  setInterval(write, 1000).unref();
  process.on('exit', write);
}
