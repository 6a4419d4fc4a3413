import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { ConfigError, loadConfig, startupWarnings } from '../../src/config.js';
import { startCli } from '../helpers/cli.js';
import { testDatabase } from '../helpers/db.js';
import { makeTestCertificate } from '../helpers/tls-cert.js';

const cert = makeTestCertificate();
const base = () => ({ POSTLINE_DATA_DIR: mkdtempSync(join(tmpdir(), 'postline-sub-')) });

test('config: submission is off unless a port is set', () => {
  const c = loadConfig(base());
  assert.equal(c.submission.port, undefined);
  assert.equal(c.submission.tlsPort, undefined);
});

test('config: a submission port without a certificate and key is refused at start-up', () => {
  assert.throws(() => loadConfig({ ...base(), POSTLINE_SUBMISSION_PORT: '587' }), (e: ConfigError) => e.variable === 'POSTLINE_TLS_CERT');
  assert.throws(() => loadConfig({ ...base(), POSTLINE_SUBMISSIONS_PORT: '465', POSTLINE_TLS_CERT: cert.certPath }), (e: ConfigError) => e.variable === 'POSTLINE_TLS_KEY');
  assert.throws(
    () => loadConfig({ ...base(), POSTLINE_SUBMISSION_PORT: '587', POSTLINE_TLS_CERT: '/nonexistent/cert.pem', POSTLINE_TLS_KEY: cert.keyPath }),
    (e: ConfigError) => e.variable === 'POSTLINE_TLS_CERT' && /no file/.test(e.message),
  );
  assert.throws(() => loadConfig({ ...base(), POSTLINE_SUBMISSION_PORT: '65536', POSTLINE_TLS_CERT: cert.certPath, POSTLINE_TLS_KEY: cert.keyPath }), ConfigError);
});

test('config: insecure AUTH is honoured only on a loopback HOST; elsewhere it is ignored with a warning', () => {
  const env = { ...base(), POSTLINE_BASE_URL: 'https://mail.example.com', POSTLINE_SUBMISSION_ALLOW_INSECURE_AUTH: 'true' };
  assert.deepEqual(startupWarnings(loadConfig({ ...env, HOST: '127.0.0.1' })), []);
  const [warning] = startupWarnings(loadConfig({ ...env, HOST: '0.0.0.0' }));
  assert.match(warning, /POSTLINE_SUBMISSION_ALLOW_INSECURE_AUTH is ignored/);
});

/** The "postline started" log line (JSON), waited for: pino may write it after the ready line. */
async function startedLine(output: () => string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const line = output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((l) => l.msg === 'postline started');
    if (line) return line;
    if (Date.now() > deadline) throw new Error(`no "postline started" line in: ${output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('postline start with both submission ports: STARTTLS and implicit TLS listeners with the configured certificate; none with --role worker', async () => {
  const db = await testDatabase();
  const env = {
    ...base(), DATABASE_URL: db.url, PORT: '0', POSTLINE_SMTP_PORT: '0', HOST: '127.0.0.1', POSTLINE_SECRET: 'test-secret-0123456789abcdef',
    LOG_LEVEL: 'info', NODE_OPTIONS: '', POSTLINE_SUBMISSION_PORT: '0', POSTLINE_SUBMISSIONS_PORT: '0',
    POSTLINE_TLS_CERT: cert.certPath, POSTLINE_TLS_KEY: cert.keyPath,
  };
  const { child, output } = await startCli(['start', '--role', 'api'], env, /postline ready/);
  try {
    const started = (await startedLine(output)) as { submissionPort: number; submissionsPort: number };
    assert.ok(started.submissionPort > 0 && started.submissionsPort > 0, output());
    const socket = tlsConnect({ host: '127.0.0.1', port: started.submissionsPort, ca: cert.cert });
    const greeting = await new Promise<string>((resolve, reject) => {
      socket.once('data', (d: Buffer) => resolve(d.toString()));
      socket.once('error', reject);
    });
    socket.destroy();
    assert.match(greeting, /^220 /);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  const worker = await startCli(['start', '--role', 'worker'], env, /postline ready/);
  try {
    const started = await startedLine(worker.output);
    assert.equal(started.submissionPort, undefined);
  } finally {
    worker.child.kill('SIGTERM');
    await new Promise((r) => worker.child.once('exit', r));
  }
});
