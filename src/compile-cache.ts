import module from 'node:module';
import { join } from 'node:path';
import { dataDirOf } from './data-dir.js';

// Absent before Node 22.1 (flush before 22.10): then the cache is simply not used.
const { enableCompileCache, flushCompileCache } = module as Partial<typeof module>;

/**
 * V8's compile cache for the service's processes (`postline start`): the code V8 compiles for
 * each module is kept on disk and reused by the next process that loads the same file, which
 * then skips most of compiling (docs/decisions/0049-start-up-cpu.md). It lives in the data dir
 * (`compile-cache/`, created on first use), which belongs to the service's user, unlike a
 * shared temporary directory where another user could plant entries; NODE_COMPILE_CACHE, when
 * set, takes precedence (Node reads it at its own start). Entries are keyed by the source's
 * content and the Node version, so an upgrade or a rebuild only misses, never misleads. A
 * cache that cannot be written is ignored. Must run before the modules it should cover are
 * imported.
 */
export function enableCompileCacheForService(env: Record<string, string | undefined>): void {
  enableCompileCache?.(join(dataDirOf(env), 'compile-cache'));
}

/**
 * Writes what this process compiled so far, so a process started next (another worker, say)
 * finds it without waiting for this one to exit. Called once the process is ready.
 */
export function saveCompileCache(): void {
  flushCompileCache?.();
}
