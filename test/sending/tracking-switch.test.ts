import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simpleParser } from 'mailparser';
import { basicEmail, startMailEnv } from '../helpers/mail-env.js';

const env = await startMailEnv();

async function deliveredHtml(body: Record<string, unknown>): Promise<{ html: string; row: { track_opens: boolean | null; track_clicks: boolean | null } }> {
  const before = env.mx.messages.length;
  const res = await env.send(body);
  assert.equal(res.statusCode, 202, res.body);
  const { rows } = await env.pool.query('SELECT track_opens, track_clicks FROM messages WHERE id = $1', [res.json().id]);
  await env.deliverAll();
  const received = await env.mx.waitForMessages(before + 1);
  const parsed = await simpleParser(received[before].raw);
  return { html: parsed.html as string, row: rows[0] };
}

test('send: tracking is on by default: links rewritten to click URLs and the open pixel added', async () => {
  const { html, row } = await deliveredHtml(basicEmail());
  assert.deepEqual(row, { track_opens: true, track_clicks: true });
  assert.doesNotMatch(html, /href="https:\/\/acme\.test\/offer/);
  assert.match(html, /<img[^>]+width="1"/);
});

test('send: tracking {opens: false} leaves out the pixel and still rewrites links', async () => {
  const { html, row } = await deliveredHtml(basicEmail({ tracking: { opens: false } }));
  assert.deepEqual(row, { track_opens: false, track_clicks: true });
  assert.doesNotMatch(html, /<img[^>]+width="1"/);
  assert.doesNotMatch(html, /href="https:\/\/acme\.test\/offer/);
});

test('send: tracking {clicks: false} keeps links as written; the unsubscribe footer stays either way', async () => {
  const { html, row } = await deliveredHtml(basicEmail({ tracking: { opens: false, clicks: false } }));
  assert.deepEqual(row, { track_opens: false, track_clicks: false });
  assert.match(html, /href="https:\/\/acme\.test\/offer\?a=1&amp;b=2"/);
  assert.match(html, /Unsubscribe<\/a>/);
});

test('send: an unknown member of tracking is 422', async () => {
  const res = await env.send(basicEmail({ tracking: { pixels: false } }));
  assert.equal(res.statusCode, 422);
});
