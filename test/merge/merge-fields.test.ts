import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../src/clock.js';
import { parseTemplate } from '../../src/templates/index.js';
import { fieldsOf } from '../../src/templates/fields.js';
import { bootApp, createTestAccount } from '../helpers/app.js';
import { createVerifiedDomain } from '../helpers/domains.js';
import { api, seedList } from '../campaigns/helpers.js';
import { engineOf } from '../automations/helpers.js';

/** One merge context everywhere, and checks of every {{ … }} against it (docs/templates.md, "Merge fields"). */
const clock = new ManualClock('2026-11-20T10:00:00.000Z');
const { app, pool, config } = await bootApp({ clock });
const acme = await createTestAccount(pool);
await createVerifiedDomain(pool, acme.accountId, 'acme.test', config.secret);
const live = api(app, acme.live);
const testKey = api(app, acme.test);
const listId = await seedList(app, pool, acme.live, acme.accountId, { count: 3, domain: 'example.net' });
const grace = (await live.post('/api/v1/subscribers', { email: 'grace@example.net', name: 'Grace', attributes: { plan: 'pro' }, lists: [listId] })).body;
const from = { email: 'hi@acme.test' };

test('fieldsOf: lists the placeholders a template names, leaving out loop variables and loop.index', () => {
  const parsed = parseTemplate('{{ a.b | x }} [for i in items]{{ i.name }} {{ loop.index }} {{ outer }}[/for] {{ a.b }}');
  assert.ok(parsed.ok);
  assert.deepEqual(fieldsOf(parsed.template).map((u) => [u.path, u.kind, u.hasFallback]), [
    ['a.b', 'variable', true], ['items', 'loop', false], ['outer', 'variable', false], ['a.b', 'variable', false],
  ]);
});

test('template save: an unknown subscriber field is a warning on the 201 and on GET; a valid template has none', async () => {
  const res = await live.post('/api/v1/templates', { name: 'Typo', subject: 'Hi {{ subscriber.nmae | friend }}', html: '<p>{{ subscriber.attributes }} {{ subscriber.attributes.plan }}</p>' });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.deepEqual(res.body.warnings.map((w: { field: string }) => w.field), ['subscriber.nmae', 'subscriber.attributes']);
  assert.match(res.body.warnings[0].message, /\(subject\) is not a subscriber field.*did you mean subscriber\.name\?/);
  assert.deepEqual((await live.get(`/api/v1/templates/${res.body.id}`)).body.warnings, res.body.warnings);
  const fixed = await live.patch(`/api/v1/templates/${res.body.id}`, { subject: 'Hi {{ subscriber.name | friend }}', html: '<p>{{ subscriber.attributes.plan }}</p>' });
  assert.deepEqual(fixed.body.warnings, []);
});

test('template preview: renders as a chosen subscriber would get it, and names what rendered empty', async () => {
  const t = (await live.post('/api/v1/templates', { name: 'Preview', subject: 'Hi {{ subscriber.name | friend }}', text: '{{ email }} {{ subscriber.attributes.plan }} {{ order_id }}' })).body;
  const res = await live.post(`/api/v1/templates/${t.id}/render`, { subscriberId: grace.id, variables: { order_id: 'A-1' } });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual([res.body.subject, res.body.text, res.body.warnings], ['Hi Grace', 'grace@example.net pro A-1', []]);
  const byEmail = await live.post(`/api/v1/templates/${t.id}/render`, { subscriberId: 'GRACE@example.net' });
  assert.equal(byEmail.body.text, 'grace@example.net pro ');
  assert.deepEqual(byEmail.body.warnings.map((w: { field: string }) => w.field), ['order_id']);
  const unknown = await live.post(`/api/v1/templates/${t.id}/render`, { subscriberId: 'sub_00000000000000000000000000000000' });
  assert.equal(unknown.status, 422);
  assert.equal(unknown.body.errors[0].field, 'subscriberId');
});

test('send: a placeholder with no value and no fallback is a warning on the 202, for live and test keys alike', async () => {
  const body = { to: 'ada@example.net', from, subject: 'Thanks for order {{ order_id }}', text: 'Hi {{ name | there }}' };
  for (const key of [live, testKey]) {
    const res = await key.post('/api/v1/emails', body);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    assert.equal(res.body.subject, 'Thanks for order ');
    assert.deepEqual(res.body.warnings.map((w: { field: string }) => w.field), ['order_id']);
    assert.match(res.body.warnings[0].message, /no value and no fallback/);
  }
  const given = await live.post('/api/v1/emails', { ...body, variables: { order_id: 'A-7' } });
  assert.deepEqual([given.body.subject, given.body.warnings], ['Thanks for order A-7', []]);
});

test('send: strict makes a missing placeholder a 422 template_error naming it, and stores nothing', async () => {
  const before = (await pool.query('SELECT count(*)::int AS n FROM messages')).rows[0].n;
  const res = await live.post('/api/v1/emails', { to: 'ada@example.net', from, subject: 'Order {{ order_id }}', text: '{{ total }}', strict: true });
  assert.equal(res.status, 422);
  assert.equal(res.body.code, 'template_error');
  assert.deepEqual(res.body.errors.map((e: { field: string }) => e.field), ['order_id', 'total']);
  assert.match(res.body.detail, /\{\{ order_id \}\}, \{\{ total \}\} have no value/);
  assert.equal((await pool.query('SELECT count(*)::int AS n FROM messages')).rows[0].n, before);
  const ok = await live.post('/api/v1/emails', { to: 'ada@example.net', from, subject: 'Order {{ order_id | ? }}', text: 'x', strict: true });
  assert.equal(ok.status, 202);
});

test('send: {{ subscriber.* }} and {{ email }} are filled in when the recipient is a subscriber; the request\'s variables still win', async () => {
  const res = await live.post('/api/v1/emails', { to: 'grace@example.net', from, subject: 'Hi {{ subscriber.name | friend }} <{{ email }}>', text: 'x' });
  assert.deepEqual([res.body.subject, res.body.warnings], ['Hi Grace <grace@example.net>', []]);
  const own = await live.post('/api/v1/emails', { to: 'grace@example.net', from, subject: 'Hi {{ subscriber.name }}', text: 'x', variables: { subscriber: { name: 'G.' } } });
  assert.equal(own.body.subject, 'Hi G.');
  const stranger = await live.post('/api/v1/emails', { to: 'nobody@example.net', from, subject: 'Hi {{ subscriber.name | friend }}', text: 'x' });
  assert.equal(stranger.body.subject, 'Hi friend');
});

test('campaign save: unknown subscriber fields, attributes no audience member has, and names outside variables are warnings', async () => {
  const res = await live.post('/api/v1/campaigns', {
    name: 'Checks', from, audience: { lists: [listId] }, variables: { greeting: 'Hello' },
    subject: '{{ greeting }}, {{ subscriber.nmae | friend }}',
    html: '<p>{{ subscriber.attributes.plan }} {{ subscriber.attributes.shoe_size | 42 }} {{ coupon }}</p>',
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const byField = Object.fromEntries(res.body.warnings.map((w: { field: string; message: string }) => [w.field, w.message]));
  assert.deepEqual(Object.keys(byField).sort(), ['coupon', 'subscriber.attributes.shoe_size', 'subscriber.nmae']);
  assert.match(byField['subscriber.attributes.shoe_size'], /no subscriber of the audience has the attribute "shoe_size"; every recipient gets the fallback/);
  assert.match(byField.coupon, /not in the campaign's variables/);
  const fixed = await live.patch(`/api/v1/campaigns/${res.body.id}`, { subject: '{{ greeting }}, {{ subscriber.name | friend }}', html: '<p>{{ subscriber.attributes.plan | free }}</p>' });
  assert.deepEqual(fixed.body.warnings, []);
});

test('campaign preview: renders for a chosen subscriber and says how many people a send would reach', async () => {
  const c = (await live.post('/api/v1/campaigns', { name: 'Preview', from, audience: { lists: [listId] }, subject: 'Hi {{ subscriber.name | there }}', html: '<p>{{ subscriber.attributes.plan | free }} <a href="{{ unsubscribe_url }}">u</a></p>' })).body;
  const res = await live.get(`/api/v1/campaigns/${c.id}/preview?subscriberId=${grace.id}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.deepEqual(res.body.subscriber, { id: grace.id, email: 'grace@example.net', name: 'Grace' });
  assert.equal(res.body.subject, 'Hi Grace');
  assert.match(res.body.html, /^<p>pro <a href="http/);
  assert.deepEqual(res.body.audience, { recipients: 4, subscribers: 4 });
  const sample = await live.get(`/api/v1/campaigns/${c.id}/preview`);
  assert.equal(sample.status, 200);
  assert.match(sample.body.subject, /^Hi (Reader \d|Grace)$/, "the first active member of the audience");
  assert.equal((await live.get('/api/v1/campaigns/cmp_00000000000000000000000000000000/preview')).status, 404);
});

test('automation: trigger data is at the top level and under data; an unknown subscriber field is a save warning', async () => {
  const res = await live.post('/api/v1/automations', {
    name: 'Orders', trigger: { event: 'order.placed' },
    steps: [{ type: 'send', from, subject: 'Order {{ order_id }} / {{ data.order_id }} for {{ subscriber.name | you }} {{ subscriber.nmae }}', text: 'x' }],
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.warnings.length, 1);
  assert.equal(res.body.warnings[0].field, 'subscriber.nmae');
  assert.match(res.body.warnings[0].message, /^steps\[0\] \(subject\) is not a subscriber field/);
  const fired = await live.post('/api/v1/automations/trigger', { event: 'order.placed', email: 'grace@example.net', data: { order_id: 'A-9' } });
  assert.equal(fired.status, 202, JSON.stringify(fired.body));
  await engineOf(pool, config, clock)();
  const { rows } = await pool.query(`SELECT subject FROM messages WHERE to_email = 'grace@example.net' AND subject LIKE 'Order%'`);
  assert.deepEqual(rows.map((r) => r.subject), ['Order A-9 / A-9 for Grace ']);
});
