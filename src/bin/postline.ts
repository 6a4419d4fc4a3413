#!/usr/bin/env node
import { enableCompileCacheForService } from '../compile-cache.js';
import { applyWorkerHeapLimits } from '../worker-heap.js';

if (process.argv[2] === 'start') {
  // A worker restarts itself with its young generation's size before anything is loaded: V8
  // sizes its heap only at start (src/worker-heap.ts).
  applyWorkerHeapLimits(process.argv, process.env);
  // The service's processes reuse what V8 compiled at their last start; it is turned on before
  // the command line itself is loaded so that it covers every module (src/compile-cache.ts).
  enableCompileCacheForService(process.env);
}
await import('../cli/program.js');
