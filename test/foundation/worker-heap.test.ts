import { test } from 'node:test';
import assert from 'node:assert/strict';
import { v8DefaultSemiSpaceMb, workerRestartArgs } from '../../src/worker-heap.js';

const NODE = '/usr/bin/node';
const worker = [NODE, 'dist/bin/postline.js', 'start', '--role', 'worker'];
const V8_13 = '13.6.233.17-node.53';
const V8_12 = '12.4.254.21-node.57';

test('worker restart: V8 13 and later restart a worker with the size asked for, 16 MB by default', () => {
  assert.deepEqual(workerRestartArgs(worker, {}, [], V8_13), [NODE, '--max-semi-space-size=16', 'dist/bin/postline.js', 'start', '--role', 'worker']);
  assert.deepEqual(workerRestartArgs(worker, { POSTLINE_WORKER_SEMI_SPACE_MB: '32' }, ['--enable-source-maps'], V8_13), [
    NODE, '--enable-source-maps', '--max-semi-space-size=32', 'dist/bin/postline.js', 'start', '--role', 'worker',
  ]);
  assert.deepEqual(workerRestartArgs([NODE, 'postline', 'start', '--role=worker'], {}, [], V8_13)?.at(1), '--max-semi-space-size=16');
});

test('worker restart: none where V8 already stops at the size asked for (16 MB before V8 13), another size still restarts', () => {
  assert.equal(v8DefaultSemiSpaceMb(V8_12, 'x64'), 16);
  assert.equal(v8DefaultSemiSpaceMb(V8_13, 'x64'), null);
  assert.equal(v8DefaultSemiSpaceMb(V8_12, 'ia32'), null);
  assert.equal(workerRestartArgs(worker, {}, [], V8_12), null);
  assert.equal(workerRestartArgs(worker, { POSTLINE_WORKER_SEMI_SPACE_MB: '16' }, [], V8_12), null);
  assert.deepEqual(workerRestartArgs(worker, { POSTLINE_WORKER_SEMI_SPACE_MB: '8' }, [], V8_12)?.at(1), '--max-semi-space-size=8');
});

test('worker restart: none for another role, V8\'s own size (0 or invalid) or a flag the operator gave', () => {
  assert.equal(workerRestartArgs([NODE, 'postline', 'start', '--role', 'api'], {}, [], V8_13), null);
  assert.equal(workerRestartArgs([NODE, 'postline', 'start'], {}, [], V8_13), null);
  assert.equal(workerRestartArgs(worker, { POSTLINE_WORKER_SEMI_SPACE_MB: '0' }, [], V8_13), null);
  assert.equal(workerRestartArgs(worker, { POSTLINE_WORKER_SEMI_SPACE_MB: 'lots' }, [], V8_13), null);
  assert.equal(workerRestartArgs(worker, {}, ['--max-semi-space-size=8'], V8_13), null);
  assert.equal(workerRestartArgs(worker, { NODE_OPTIONS: '--max_semi_space_size 8' }, [], V8_13), null);
});
