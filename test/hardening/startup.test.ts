import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startupWarnings, loadConfig } from '../../src/config.js';
import { logFormat, loggerOptions } from '../../src/logging.js';
import { CLI, startCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';

/**
 * `postline start` warns when the public base URL is not https,
 * prints no Fastify deprecation warning, and logs pretty lines on a terminal, JSON otherwise.
 */
const db = await testDatabase();
const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: db.url, POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-start-')), PORT: '0', POSTLINE_SMTP_PORT: '0',
  POSTLINE_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'info', NODE_OPTIONS: '', ...extra,
});

test('start-up: an http base URL (the default) is warned about, naming RFC 8058; an https one is not', () => {
  const dir = mkdtempSync(join(tmpdir(), 'postline-cfg-'));
  const [warning] = startupWarnings(loadConfig({ POSTLINE_DATA_DIR: dir }));
  assert.match(warning, /POSTLINE_BASE_URL is http:\/\/localhost:3000, not https/);
  assert.match(warning, /RFC 8058/);
  assert.deepEqual(startupWarnings(loadConfig({ POSTLINE_DATA_DIR: dir, POSTLINE_BASE_URL: 'https://mail.example.com' })), []);
});

test('logging: pretty on a terminal, JSON lines otherwise', () => {
  assert.equal(logFormat({ isTTY: true }), 'pretty');
  assert.equal(logFormat({ isTTY: false }), 'json');
  assert.equal(logFormat({}), 'json');
  assert.equal((loggerOptions('info', [], 'pretty').transport as { target: string }).target, 'pino-pretty');
  assert.equal(loggerOptions('info', [], 'json').transport, undefined);
});

test('postline start (stdout not a terminal): JSON log lines, the https warning among them, no FSTDEP022', async () => {
  const { child, output } = await startCli(['start', '--role', 'api'], env(), /postline ready/);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const out = output();
  assert.ok(!out.includes('FSTDEP022'), out);
  assert.ok(!/DeprecationWarning|FastifyWarning/.test(out), out);
  const lines = out.split('\n').filter((l) => l.startsWith('{'));
  assert.ok(lines.length > 0, out);
  const warn = lines.map((l) => JSON.parse(l)).find((l) => l.level === 40);
  assert.match(warn?.msg ?? '', /not https/, out);
});

test('postline start with PORT=0: the ready line names the port it was given, and the API answers there', async () => {
  const { child, output } = await startCli(['start', '--role', 'api'], env(), /postline ready/);
  try {
    const port = Number(/listening on port (\d+)/.exec(output())?.[1]);
    assert.ok(port > 0, output());
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(res.status, 200);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});

test('postline start on a terminal: pretty log lines (pino-pretty), not JSON', async () => {
  const e = env();
  const command = [process.execPath, '--import', 'tsx', CLI, 'start', '--role', 'api'].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: { ...process.env, ...e }, detached: true });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready: ${out}`)), 90_000);
    child.stdout.on('data', () => {
      if (/postline ready/.test(out) && /not https/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  process.kill(-child.pid!, 'SIGTERM');
  await new Promise((r) => child.once('exit', r));
  const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
  assert.match(plain, /WARN.*POSTLINE_BASE_URL is http/);
  assert.ok(!plain.split('\n').some((l) => l.trim().startsWith('{"level"')), plain);
  assert.ok(!plain.includes('FSTDEP022'), plain);
});
