/**
 * The young generation of a worker process (docs/decisions/0055-worker-young-generation.md).
 *
 * V8 13 (Node 24) lets each of the young generation's two semi-spaces grow to 64 MB on a
 * 64-bit machine with a few GB of memory, where V8 12 and older (Node 22, 20) stopped at 16 MB.
 * A worker allocates fast (every message is composed, signed and written) and filled all of it:
 * 128 MB of young generation, ~290-300 MB resident per worker in `bench:campaign`, for no CPU
 * saved. Workers run with POSTLINE_WORKER_SEMI_SPACE_MB (default 16; 0 leaves V8's own size).
 *
 * V8 sizes its heap once, when the process starts (`v8.setFlagsFromString` afterwards does not
 * resize it), so `postline start --role worker` replaces itself, before loading anything else,
 * with the same command and `--max-semi-space-size` on node's command line (`process.execve`,
 * Node ≥ 22.15: same process id, so a supervisor, systemd or a benchmark still sees its own
 * child). A flag the operator gave (node's command line or NODE_OPTIONS) is left as it is.
 * Where V8's own size already is the one asked for (16 MB before V8 13), nothing restarts.
 */
import { getHeapStatistics } from 'node:v8';

export const DEFAULT_WORKER_SEMI_SPACE_MB = 16;
export const WORKER_SEMI_SPACE_VARIABLE = 'POSTLINE_WORKER_SEMI_SPACE_MB';

type Env = Record<string, string | undefined>;

const SEMI_SPACE_FLAG = /(^|\s)--max[-_]semi[-_]space[-_]size(=|\s|$)/;

/**
 * The semi-space size asked for, in MB; null for V8's own (0). An invalid value also gives
 * null here: `loadConfig` refuses it with its message once the command line is loaded.
 */
export function requestedSemiSpaceMb(env: Env): number | null {
  const raw = env[WORKER_SEMI_SPACE_VARIABLE];
  const mb = raw === undefined || raw === '' ? DEFAULT_WORKER_SEMI_SPACE_MB : Number(raw);
  return Number.isInteger(mb) && mb >= 1 && mb <= 1024 ? mb : null;
}

/** Whether node was started with --max-semi-space-size (on its command line or in NODE_OPTIONS). */
export function semiSpaceFlagGiven(execArgv: readonly string[], env: Env): boolean {
  return execArgv.some((a) => SEMI_SPACE_FLAG.test(a)) || SEMI_SPACE_FLAG.test(env.NODE_OPTIONS ?? '');
}

/** The role of `postline start [--role <role>]` from the raw command line (commander parses it later). */
function startRole(argv: readonly string[]): string {
  const i = argv.indexOf('--role');
  if (i >= 0) return argv[i + 1] ?? '';
  return argv.find((a) => a.startsWith('--role='))?.slice('--role='.length) ?? 'all';
}

/**
 * V8's own semi-space limit in MB where it does not depend on the machine: 16 MB in 64-bit V8
 * before 13 (Node 20, 22), the same heap limit as with `--max-semi-space-size=16`. Null where
 * V8 sizes it by the machine's memory (13 and later: 64 MB with a few GB) or it is not known.
 */
export function v8DefaultSemiSpaceMb(v8Version: string = process.versions.v8, arch: string = process.arch): number | null {
  return Number.parseInt(v8Version, 10) < 13 && SIXTY_FOUR_BIT.has(arch) ? 16 : null;
}

const SIXTY_FOUR_BIT = new Set(['x64', 'arm64', 'ppc64', 's390x', 'riscv64', 'loong64']);

/**
 * The command line a worker restarts itself with to get the young generation asked for, or null
 * when it already runs with it: not a worker, V8's own size asked for (0 or an invalid value),
 * the operator's flag given, or V8's own size is already the one asked for (a restart there
 * would cost a second start and change nothing).
 */
export function workerRestartArgs(argv: readonly string[], env: Env, execArgv: readonly string[], v8Version?: string): string[] | null {
  if (startRole(argv.slice(3)) !== 'worker') return null;
  const mb = requestedSemiSpaceMb(env);
  if (mb === null || semiSpaceFlagGiven(execArgv, env) || mb === v8DefaultSemiSpaceMb(v8Version)) return null;
  return [argv[0], ...execArgv, `--max-semi-space-size=${mb}`, ...argv.slice(1)];
}

/**
 * Called first thing by `postline start`: a worker that was not started with the young
 * generation asked for replaces itself with one that is. Returns only when nothing is to be
 * done or the replacement cannot be made (Node < 22.15, or execve failed): the worker then runs
 * with V8's own size, which `heapSettingWarning` reports.
 */
export function applyWorkerHeapLimits(argv: readonly string[], env: Env): void {
  if (typeof process.execve !== 'function') return;
  const args = workerRestartArgs(argv, env, process.execArgv);
  if (args === null) return;
  try {
    process.execve(process.execPath, args, env);
  } catch {
    /* the worker runs on as it is; the start-up warning says so */
  }
}

/** What a worker logs at start: the semi-space size asked for and V8's heap limit in effect (it moves with it). */
export function workerHeapFacts(semiSpaceMb: number | null): { semiSpaceMb: number | 'v8-default'; heapSizeLimitMb: number } {
  return { semiSpaceMb: semiSpaceMb ?? 'v8-default', heapSizeLimitMb: Math.round(getHeapStatistics().heap_size_limit / 1048576) };
}

/**
 * A warning when a worker could not be given the semi-space size asked for. Only for a size
 * other than the default: Node 20 and 22, the versions without `process.execve`, already stop
 * at 16 MB by themselves.
 */
export function heapSettingWarning(semiSpaceMb: number | null, execArgv: readonly string[], env: Env): string | null {
  if (semiSpaceMb === null || semiSpaceMb === DEFAULT_WORKER_SEMI_SPACE_MB || semiSpaceFlagGiven(execArgv, env)) return null;
  return (
    `${WORKER_SEMI_SPACE_VARIABLE}=${semiSpaceMb} is not applied: this Node (${process.version}) cannot restart a worker with ` +
    `V8 flags (process.execve, Node ≥ 22.15); start node with --max-semi-space-size=${semiSpaceMb} (or put it in NODE_OPTIONS).`
  );
}
