#!/usr/bin/env node
import { enableCompileCacheForService } from '../compile-cache.js';

// The service's processes reuse what V8 compiled at their last start; it is turned on before
// the command line itself is loaded so that it covers every module (src/compile-cache.ts).
if (process.argv[2] === 'start') enableCompileCacheForService(process.env);
await import('../cli/program.js');
