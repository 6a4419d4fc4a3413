import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { renderCompiledTemplate, requireTemplateForSend } from '../../src/domain/stored-templates.js';
import { bootApp, createTestAccount } from '../helpers/app.js';

const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const other = await createTestAccount(pool, 'Other');
const json = { ...acme.live, 'content-type': 'application/json' };

async function create(body: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload: body });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}
const render = (id: string, payload: unknown) => app.inject({ method: 'POST', url: `/api/v1/templates/${id}/render`, headers: json, payload: payload as never });

const order = await create({
  name: 'Order',
  subject: 'Order {{ order.number }} for {{ first_name | there }}',
  html: '<p>Hi {{ first_name | there }}</p><ul>[for item in order.items]<li>{{ loop.index }}. {{ item.name }} × {{ item.qty | 1 }}</li>[/for]</ul>',
  text: 'Hi {{ first_name | there }}\n[for item in order.items]- {{ item.name }}\n[/for]',
});

test('POST /templates/{id}/render: renders subject, html and text with the variables', async () => {
  const res = await render(order.id, { variables: { first_name: 'Ada', order: { number: 'A-1', items: [{ name: 'Lamp', qty: 2 }, { name: 'Bulb' }] } } });
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    subject: 'Order A-1 for Ada',
    html: '<p>Hi Ada</p><ul><li>1. Lamp × 2</li><li>2. Bulb × 1</li></ul>',
    text: 'Hi Ada\n- Lamp\n- Bulb\n',
    warnings: [],
  });
});

test('POST /templates/{id}/render: values are HTML-escaped in html only, and the subject gets no line break', async () => {
  const res = await render(order.id, { variables: { first_name: '<b>"Tom" & \'Jerry\'</b>\r\nBcc: x@evil.test', order: { number: '1', items: [] } } });
  const r = res.json();
  assert.equal(r.html, '<p>Hi &lt;b&gt;&quot;Tom&quot; &amp; &#39;Jerry&#39;&lt;/b&gt;\r\nBcc: x@evil.test</p><ul></ul>');
  assert.equal(r.text, 'Hi <b>"Tom" & \'Jerry\'</b>\r\nBcc: x@evil.test\n');
  assert.equal(r.subject, 'Order 1 for <b>"Tom" & \'Jerry\'</b> Bcc: x@evil.test');
  assert.doesNotMatch(r.subject, /[\r\n]/);
});

test('POST /templates/{id}/render: without variables the fallbacks apply; a value is never parsed again', async () => {
  const a = (await render(order.id, {})).json();
  assert.equal(a.subject, 'Order  for there');
  assert.equal(a.html, '<p>Hi there</p><ul></ul>');
  const b = (await render(order.id, { variables: { first_name: '{{ order.number }} [for x in y]' } })).json();
  assert.equal(b.text, 'Hi {{ order.number }} [for x in y]\n');
});

test('POST /templates/{id}/render: parts the template lacks are null', async () => {
  const t = await create({ name: 'Text only', text: 'Hello {{ name }}' });
  assert.deepEqual((await render(t.id, { variables: { name: 'Bo' } })).json(), { subject: null, html: null, text: 'Hello Bo', warnings: [] });
});

test('POST /templates/{id}/render: variables must be an object', async () => {
  for (const variables of [[1, 2], 'x', 3]) {
    const res = await render(order.id, { variables });
    assert.equal(res.statusCode, 422, JSON.stringify(variables));
    assert.equal(res.json().code, 'validation_failed');
  }
});

test('POST /templates/{id}/render: unknown template is 404', async () => {
  const res = await render('tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10', {});
  assert.equal(res.statusCode, 404);
  assert.equal(res.json().code, 'not_found');
});

test('POST /templates/{id}/render: a stored template that no longer parses is 422 template_error, not a 500', async () => {
  const id = newId('tpl');
  await pool.query(
    `INSERT INTO templates (id, account_id, name, html, created_at, updated_at) VALUES ($1, $2, 'legacy', '<p>[for x in y]</p>', now(), now())`,
    [id, acme.accountId],
  );
  const res = await render(id, {});
  assert.equal(res.statusCode, 422);
  assert.deepEqual([res.json().code, res.json().field, res.json().line, res.json().column], ['template_error', 'html', 1, 4]);
});

test('POST /templates/{id}/render: a draft renders unsaved parts in place of the saved ones and stores nothing', async () => {
  const before = (await app.inject({ url: `/api/v1/templates/${order.id}`, headers: acme.live })).json();
  const res = await render(order.id, { variables: { first_name: 'Ada', order: { number: 'A-2', items: [] } }, draft: { html: '<h1>Draft for {{ first_name }}</h1>', text: null } });
  assert.equal(res.statusCode, 200, res.body);
  assert.deepEqual(res.json(), { subject: 'Order A-2 for Ada', html: '<h1>Draft for Ada</h1>', text: null, warnings: [] });
  const after = (await app.inject({ url: `/api/v1/templates/${order.id}`, headers: acme.live })).json();
  assert.deepEqual(after, before);
});

test('POST /templates/{id}/render: a draft with a syntax error is 422 template_error with its part, line and column; size limits as a save; another account\'s id 404', async () => {
  const broken = await render(order.id, { draft: { html: '<p>\n  {{ name' } });
  assert.equal(broken.statusCode, 422);
  assert.deepEqual([broken.json().code, broken.json().field, broken.json().line], ['template_error', 'html', 2]);
  assert.equal(typeof broken.json().column, 'number');
  const big = await render(order.id, { draft: { subject: 'é'.repeat(600) } });
  assert.equal(big.statusCode, 422);
  assert.equal(big.json().code, 'validation_failed');
  assert.equal((await render(order.id, { draft: { html: '<p>x</p>', other: 'y' } })).statusCode, 422);
  assert.equal((await render(order.id, { draft: { html: 'nul \u0000' } })).statusCode, 422);
  const foreign = await app.inject({ method: 'POST', url: `/api/v1/templates/${order.id}/render`, headers: { ...other.live, 'content-type': 'application/json' }, payload: { draft: { html: '<p>x</p>' } } });
  assert.equal(foreign.statusCode, 404);
});

test('requireTemplateForSend: returns the parsed template ready to render', async () => {
  const t = await requireTemplateForSend(pool, acme.accountId, order.id);
  assert.equal(t.id, order.id);
  const r = renderCompiledTemplate(t, { first_name: 'Li', order: { number: '9', items: [{ name: 'Cup' }] } });
  assert.equal(r.subject, 'Order 9 for Li');
  assert.equal(r.text, 'Hi Li\n- Cup\n');
});

test('requireTemplateForSend: an unknown id or another account\'s template is template_error "unknown template"', async () => {
  for (const [accountId, id] of [[acme.accountId, 'tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10'], [other.accountId, order.id], [acme.accountId, 'bogus']]) {
    await assert.rejects(requireTemplateForSend(pool, accountId, id), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'template_error');
      assert.match(err.message, /^unknown template /);
      return true;
    });
  }
});
