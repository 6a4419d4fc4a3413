#!/usr/bin/env node
/**
 * `npm start`'s build step: bundles the server (esbuild → dist/, scripts/build-server.mjs) and
 * builds the dashboard (vite → web/dist/) only when their sources changed since the last
 * build, so a start with nothing changed takes no build time (a full build takes 18–24 s on a
 * small machine, nearly all of it the dashboard's).
 *
 * "Changed" is by content, not mtime: a SHA-256 over the path and bytes of every input,
 * recorded next to each output after a successful build. A checkout that touches files without
 * changing them rebuilds nothing; an edit, a new file or a deleted one rebuilds that half.
 * `--force` builds both whatever the hashes say.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Each half: what it is built from, the command, and where its build records the hash. */
const TARGETS = [
  {
    name: 'server',
    inputs: ['src', 'tsconfig.json', 'package-lock.json', 'scripts/build-server.mjs'],
    command: ['node', ['scripts/build-server.mjs']],
    stamp: 'dist/.source-hash',
    output: 'dist/bin/postline.js',
  },
  {
    name: 'sdk',
    inputs: ['packages/sdk/src', 'packages/sdk/tsconfig.json', 'packages/sdk/package.json'],
    command: ['npm', ['run', 'build', '--workspace', '@postline/sdk', '--silent']],
    stamp: 'packages/sdk/dist/.source-hash',
    output: 'packages/sdk/dist/index.js',
  },
  {
    name: 'dashboard',
    // web/src holds the API types generated from the routes (checked current by `npm run lint`).
    inputs: ['web/src', 'web/index.html', 'web/vite.config.ts', 'web/tsconfig.json', 'package-lock.json'],
    command: ['npm', ['run', 'build:web', '--silent']],
    stamp: 'web/dist/.source-hash',
    output: 'web/dist/index.html',
  },
];

function filesOf(path) {
  const full = join(ROOT, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full).sort().flatMap((name) => filesOf(join(path, name)));
}

function sourceHash(inputs) {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(filesOf)) {
    hash.update(relative(ROOT, join(ROOT, file)) + '\0');
    hash.update(readFileSync(join(ROOT, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

const force = process.argv.includes('--force');
for (const target of TARGETS) {
  const hash = sourceHash(target.inputs);
  const stamp = join(ROOT, target.stamp);
  const built = existsSync(join(ROOT, target.output)) && existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash;
  if (built && !force) continue;
  console.error(`postline: building the ${target.name} (its sources changed since the last build)`);
  const [cmd, args] = target.command;
  const result = spawnSync(cmd, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  writeFileSync(stamp, hash + '\n');
}
