import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { CLAIM_LEAVES_OUT, CLAIMED_COLUMNS, CLAIMED_CONTENT, claimDueMessages } from '../../src/delivery/queue.js';
import { getMessage, MESSAGE_COLUMNS, MESSAGE_CONTENT } from '../../src/db/queries/messages.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

// What a claim and a read return (src/delivery/queue.ts CLAIMED_COLUMNS, getMessage): each column once, the content
// from the group's row on a cc/bcc copy, and every column of the table accounted for.
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const env = await startMailEnv({ clock });
const { pool } = env;

test('claim columns: every column of messages is named, as content or not; a claim returns each or leaves it out on purpose', async () => {
  const { rows } = await pool.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'messages' ORDER BY column_name`,
  );
  const named = [...MESSAGE_COLUMNS, ...MESSAGE_CONTENT];
  assert.equal(new Set(named).size, named.length, 'no column named twice');
  assert.deepEqual([...named].sort(), rows.map((r) => r.column_name).sort(), 'a new column of messages must be named in MESSAGE_COLUMNS');
  const placed = [...CLAIMED_COLUMNS, ...CLAIMED_CONTENT, ...CLAIM_LEAVES_OUT];
  assert.deepEqual([...placed].sort(), [...named].sort(), 'a claim returns every column it does not leave out');
});

test('claim columns: a claimed row carries each returned column once and, on a cc copy, its group\'s content; it equals the stored row in everything it returns', async () => {
  const res = await env.app.inject({
    method: 'POST', url: '/api/v1/emails', headers: { ...env.acme.live, 'content-type': 'application/json' },
    payload: basicEmail({ to: `to@${RECIPIENT_DOMAIN}`, cc: [`cc@${RECIPIENT_DOMAIN}`], html: '<p>Hello é</p>', text: 'Hello é', attachments: [{ filename: 'a.txt', content: Buffer.from('hi').toString('base64') }] }),
  });
  assert.equal(res.statusCode, 202, res.body);
  const claimed = await claimDueMessages(pool, 'w1', clock.now(), 10, 60_000);
  assert.equal(claimed.length, 2);
  for (const row of claimed) {
    assert.deepEqual(Object.keys(row).sort(), [...CLAIMED_COLUMNS, ...CLAIMED_CONTENT, 'due_seen'].sort(), 'each column once, and how many due messages the claim found');
    const stored = await getMessage(pool, row.account_id, row.id);
    assert.ok(stored);
    assert.deepEqual(Object.keys(stored).sort(), [...MESSAGE_COLUMNS, ...MESSAGE_CONTENT].sort(), 'a read returns each column once');
    for (const column of [...CLAIMED_COLUMNS, ...CLAIMED_CONTENT]) assert.deepEqual(row[column], stored[column], column);
    assert.equal(row.html, '<p>Hello é</p>');
    assert.equal(row.text, 'Hello é');
    assert.equal(row.attachments.length, 1);
  }
  const copy = claimed.find((r) => r.to_email.startsWith('cc@'));
  assert.ok(copy && copy.group_id !== copy.id, 'the cc copy is a row of the group');
});
