import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileTemplate, renderTemplate } from '../../src/templates/index.js';
import { RENDER_LIMITS } from '../../src/templates/render.js';
import { AppError } from '../../src/errors.js';
import { bootApp, createTestAccount } from '../helpers/app.js';

/** A render is bounded in output size and in work, preview and send alike. */
const { app, pool } = await bootApp();
const acme = await createTestAccount(pool);
const json = { ...acme.live, 'content-type': 'application/json' };

async function template(html: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/templates', headers: json, payload: { name: `t${Math.random()}`, subject: 'S', html } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

test('render limits: nested loops multiplying past the output cap answer 422 template_error, quickly', async () => {
  const id = await template('[for x in a][for y in a][for z in a]{{ x }}-{{ y }}-{{ z }} padding padding padding [/for][/for][/for]');
  const a = Array.from({ length: 400 }, (_, i) => i);
  const started = process.hrtime.bigint();
  const res = await app.inject({ method: 'POST', url: `/api/v1/templates/${id}/render`, headers: json, payload: { variables: { a } } });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  assert.equal(res.statusCode, 422, res.body.slice(0, 200));
  assert.equal(res.json().code, 'template_error');
  assert.match(res.json().detail, /exceeds|steps/);
  assert.ok(ms < 5000, `answered in ${ms} ms`);
});

test('render limits: a loop over two million items with an empty body stops at the step limit', async () => {
  const id = await template('x[for i in items][/for]y');
  const res = await app.inject({ method: 'POST', url: `/api/v1/templates/${id}/render`, headers: json, payload: `{"variables":{"items":[${'0,'.repeat(2_000_000)}0]}}` });
  assert.equal(res.statusCode, 422, res.body.slice(0, 200));
  assert.match(res.json().detail, /steps/);
});

test('render limits: a large value repeated by a loop hits the output cap, in the send path too', async () => {
  const big = 'x'.repeat(1024 * 1024);
  assert.throws(() => renderTemplate(compileTemplate('[for i in n]{{ big }}[/for]'), { n: [1, 2, 3, 4, 5], big }, 'html'), (err: unknown) => err instanceof AppError && err.code === 'template_error');
  assert.equal(renderTemplate(compileTemplate('[for i in n]{{ big }}[/for]'), { n: [1, 2, 3], big }, 'text').length, 3 * big.length, 'under the cap is fine');
  assert.ok(RENDER_LIMITS.outputChars >= 2 * 1024 * 1024, 'the cap is above the send limit of 2 MB');
});

test('render limits: ordinary templates render as before', async () => {
  const id = await template('<ul>[for item in items]<li>{{ item.name }}</li>[/for]</ul>');
  const res = await app.inject({ method: 'POST', url: `/api/v1/templates/${id}/render`, headers: json, payload: { variables: { items: Array.from({ length: 5000 }, (_, i) => ({ name: `n${i}` })) } } });
  assert.equal(res.statusCode, 200);
  assert.ok(res.json().html.includes('<li>n4999</li>'));
});
