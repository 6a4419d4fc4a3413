import { test } from 'node:test';
import assert from 'node:assert/strict';

// That the SDK runs outside Node is checked at compile time: packages/sdk/tsconfig.json has no
// Node types (`"types": []`, DOM lib), so `npm run typecheck` fails on any Node-only API.

test('sdk package: @postline/sdk resolves through the workspace to its build and exports Postline, PostlineError, verifyWebhook', async () => {
  const sdk = await import('@postline/sdk');
  assert.equal(typeof sdk.Postline, 'function');
  assert.equal(typeof sdk.PostlineError, 'function');
  assert.equal(typeof sdk.verifyWebhook, 'function');
  const postline = new sdk.Postline({ apiKey: 'sk_test_x', baseUrl: 'http://127.0.0.1:1' });
  assert.equal(typeof postline.emails.send, 'function');
});
