import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommit } from '../../src/db/group-commit.js';
import { insertAcceptedMessages, type MessageRow, type SentEventRow } from '../../src/db/queries/messages.js';
import { newId } from '../../src/ids.js';
import { createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { basicEmail, RECIPIENT_DOMAIN, startMailEnv } from '../helpers/mail-env.js';

/**
 * One account's bad send must not fail another's. Sends of all accounts
 * share the group commit, so the bad input is refused before it, and a statement that still
 * fails there fails only its own request.
 */
const env = await startMailEnv();
const { app, pool, acme, config } = env;
const json = (h: Record<string, string>) => ({ ...h, 'content-type': 'application/json' });

async function messagesOf(accountId: string): Promise<number> {
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM messages WHERE account_id = $1', [accountId]);
  return rows[0].n;
}

test("send isolation: another account's sends with NUL or a lone surrogate fail alone; 300 concurrent valid sends all succeed", async () => {
  const bad = await createTestAccount(pool, 'Hostile');
  await createVerifiedDomain(pool, bad.accountId, 'hostile.test', config.secret);
  const before = await messagesOf(acme.accountId);
  const good = Array.from({ length: 300 }, (_, i) => env.send(basicEmail({ to: `r${i}@${RECIPIENT_DOMAIN}` })));
  const hostile = Array.from({ length: 60 }, (_, i) =>
    app.inject({
      method: 'POST', url: '/api/v1/emails', headers: json(bad.live),
      payload: `{"to":"x${i}@${RECIPIENT_DOMAIN}","from":{"email":"a@hostile.test"},"subject":"s","html":"${i % 2 ? '<p>\\u0000</p>' : '<p>\\ud800</p>'}"}`,
    }));
  const [goodRes, badRes] = await Promise.all([Promise.all(good), Promise.all(hostile)]);
  assert.deepEqual([...new Set(goodRes.map((r) => r.statusCode))], [202]);
  assert.deepEqual([...new Set(badRes.map((r) => r.statusCode))], [422]);
  assert.equal(badRes[0].json().errors[0].field, 'html');
  assert.equal(await messagesOf(acme.accountId), before + 300);
  assert.equal(await messagesOf(bad.accountId), 0);
});

test('send isolation: in the shared group commit against PostgreSQL, a row the database refuses fails only its own submission', async () => {
  const domain = (await pool.query('SELECT id FROM domains WHERE account_id = $1', [acme.accountId])).rows[0].id as string;
  const now = new Date();
  const rowOf = (html: string): { row: MessageRow; event: SentEventRow } => {
    const id = newId('msg');
    return {
      row: {
        id, account_id: acme.accountId, domain_id: domain, status: 'queued', from_email: 'a@acme.test', from_name: null, to_email: `gc@${RECIPIENT_DOMAIN}`,
        to_domain: RECIPIENT_DOMAIN, cc: [], bcc: [], reply_to: null, subject: 's', html, text: null, headers: {}, attachments: [], tags: [],
        template_id: null, campaign_id: null, attempts: 0, next_attempt_at: now, first_attempt_at: null, last_response: null, last_mx: null,
        locked_by: null, scheduled_at: null, delivered_at: null, created_at: now,
      },
      event: { id: newId('evt'), account_id: acme.accountId, message_id: id, type: 'sent', email: `gc@${RECIPIENT_DOMAIN}`, url: null, data: {}, occurred_at: now },
    };
  };
  let writes = 0;
  const gc = new GroupCommit<{ row: MessageRow; event: SentEventRow }, string>(async (batch) => {
    writes++;
    await insertAcceptedMessages(pool, batch.map((b) => b.row), batch.map((b) => b.event), null);
    return batch.map((b) => b.row.id);
  }, { maxBatch: 500, maxInFlight: 1 });
  const items = Array.from({ length: 50 }, (_, i) => rowOf(i === 17 || i === 33 ? 'NUL \u0000 here' : `<p>${i}</p>`));
  const settled = await Promise.allSettled(items.map((it) => gc.submit(it)));
  const rejected = settled.flatMap((r, i) => (r.status === 'rejected' ? [i] : []));
  assert.deepEqual(rejected, [17, 33]);
  const { rows } = await pool.query('SELECT id FROM messages WHERE id = ANY($1)', [items.map((it) => it.row.id)]);
  assert.equal(rows.length, 48, 'the 48 good rows are stored, once each');
  assert.ok(writes < 50, `${writes} statements`);
});

test('batch send: an item breaking the schema or holding NUL is answered alone; the others are accepted', async () => {
  const before = await messagesOf(acme.accountId);
  const ok = (i: number) => JSON.stringify(basicEmail({ to: `batch${i}@${RECIPIENT_DOMAIN}` }));
  const items = [
    ok(0),
    '{"to":"x@example.net","from":{"email":"hello@acme.test"},"subject":"s","html":"a\\u0000b"}',
    ok(2),
    JSON.stringify({ ...basicEmail(), to: 5 }),
    JSON.stringify({ ...basicEmail(), nonsense: true }),
    '{"to":"y@example.net","from":{"email":"hello@acme.test"},"subject":"\\udfff","text":"t"}',
    '"not an object"',
    ok(7),
  ];
  const res = await app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: json(acme.live), payload: `{"emails":[${items.join(',')}]}` });
  assert.equal(res.statusCode, 200, res.body);
  const data = res.json().data as { index: number; status?: string; error?: { code: string; status: number; errors: { field: string }[] } }[];
  assert.deepEqual(data.map((d) => d.index), [0, 1, 2, 3, 4, 5, 6, 7]);
  assert.deepEqual(data.map((d) => d.status ?? d.error?.code), ['queued', 'validation_failed', 'queued', 'validation_failed', 'validation_failed', 'validation_failed', 'validation_failed', 'queued']);
  assert.equal(data[1].error!.errors[0].field, 'html');
  assert.equal(data[3].error!.errors[0].field, 'to');
  assert.equal(data[4].error!.errors[0].field, 'nonsense');
  assert.equal(data[5].error!.errors[0].field, 'subject');
  assert.equal(await messagesOf(acme.accountId), before + 3);
});

test('batch send: problems of the request itself (no array, over 500 items, unknown top-level field) still fail it whole', async () => {
  for (const payload of [{}, { emails: [] }, { emails: Array(501).fill(basicEmail()) }, { emails: [basicEmail()], extra: 1 }]) {
    const res = await app.inject({ method: 'POST', url: '/api/v1/emails/batch', headers: json(acme.live), payload });
    assert.equal(res.statusCode, 422, JSON.stringify(payload).slice(0, 80));
    assert.equal(res.json().code, 'validation_failed');
  }
});
