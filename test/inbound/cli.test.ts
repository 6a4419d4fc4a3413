import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';

test('cli: postline fbl-secret prints POSTLINE_FBL_SECRET when set', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'postline-fbl-'));
  const r = await runCli(['fbl-secret'], { POSTLINE_DATA_DIR: dataDir, POSTLINE_FBL_SECRET: 'fbl_given-0123456789abcdef' });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, 'fbl_given-0123456789abcdef\n');
});

test('cli: postline fbl-secret without the variable prints the key generated into the data dir, the same every time', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'postline-fbl-'));
  const env = { POSTLINE_DATA_DIR: dataDir, POSTLINE_FBL_SECRET: '', PORT: '3999' };
  const first = await runCli(['fbl-secret'], env);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /^fbl_[A-Za-z0-9_-]{43}\n$/);
  const json = await runCli(['fbl-secret', '--json'], env);
  assert.deepEqual(JSON.parse(json.stdout), { fblSecret: first.stdout.trim(), url: 'http://localhost:3999/api/fbl/inbound' });
});
