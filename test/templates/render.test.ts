import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  compileTemplate,
  renderTemplate,
  type RenderContext,
  type TemplateVariables,
} from '../../src/templates/index.js';

function render(source: string, variables: TemplateVariables = {}, context: RenderContext = 'text'): string {
  return renderTemplate(compileTemplate(source), variables, context);
}

// ——— variables ———

test('variables: a name renders its value', () => {
  assert.equal(render('Hi {{ name }}!', { name: 'Ada' }), 'Hi Ada!');
});

test('variables: a dotted path reaches into nested objects', () => {
  assert.equal(render('{{ user.first_name }}', { user: { first_name: 'Ada' } }), 'Ada');
});

test('variables: a numeric segment indexes an array', () => {
  assert.equal(render('{{ items.1.name }}', { items: [{ name: 'a' }, { name: 'b' }] }), 'b');
});

test('variables: a missing variable renders as empty', () => {
  assert.equal(render('[{{ missing }}]'), '[]');
});

test('variables: a path through a missing or non-object value renders as empty', () => {
  assert.equal(render('[{{ a.b.c }}|{{ s.length }}|{{ n.x }}]', { a: {}, s: 'str', n: null }), '[||]');
});

test('variables: numbers and booleans stringify naturally', () => {
  assert.equal(render('{{ a }} {{ b }} {{ c }} {{ d }} {{ e }}', { a: 42, b: 1.5, c: 0, d: true, e: false }), '42 1.5 0 true false');
});

test('variables: objects and arrays render as empty', () => {
  assert.equal(render('[{{ o }}{{ a }}]', { o: { x: 1 }, a: [1, 2] }), '[]');
});

test('variables: an array exposes its length', () => {
  assert.equal(render('{{ items.length }} items', { items: [1, 2, 3] }), '3 items');
});

test('variables: inherited properties are not reachable', () => {
  assert.equal(render('[{{ constructor }}{{ __proto__ }}{{ a.toString }}{{ a.constructor.name }}]', { a: {} }), '[]');
});

// ——— fallbacks ———

test('fallback: used when the variable is absent', () => {
  assert.equal(render('Hi {{ first_name | there }}'), 'Hi there');
});

test('fallback: used when the variable is null', () => {
  assert.equal(render('{{ a | x }}', { a: null }), 'x');
});

test('fallback: used when the variable is undefined', () => {
  assert.equal(render('{{ a | x }}', { a: undefined }), 'x');
});

test('fallback: used when the variable is the empty string', () => {
  assert.equal(render('{{ a | x }}', { a: '' }), 'x');
});

test('fallback: used when the value is an object or array (they print nothing)', () => {
  assert.equal(render('{{ a | x }}{{ b | y }}', { a: {}, b: [] }), 'xy');
});

test('fallback: not used for 0, false or a blank-but-not-empty string', () => {
  assert.equal(render('[{{ a | x }}|{{ b | x }}|{{ c | x }}]', { a: 0, b: false, c: ' ' }), '[0|false| ]');
});

test('fallback: a quoted fallback keeps its exact text', () => {
  assert.equal(render('Dear {{ name | "valued customer" }},'), 'Dear valued customer,');
  assert.equal(render("{{ name | ' x ' }}"), ' x ');
});

test('fallback: used when a dotted path breaks', () => {
  assert.equal(render('{{ user.first_name | there }}', { user: null }), 'there');
});

// ——— loops ———

test('loops: the body renders once per item with the loop variable bound', () => {
  assert.equal(render('[for i in items]<{{ i.name }}>[/for]', { items: [{ name: 'a' }, { name: 'b' }] }), '<a><b>');
});

test('loops: the path may be dotted', () => {
  assert.equal(render('[for item in order.items]{{ item }},[/for]', { order: { items: [1, 2] } }), '1,2,');
});

test('loops: outer variables stay visible inside', () => {
  assert.equal(render('[for i in items]{{ greeting }} {{ i }};[/for]', { greeting: 'hi', items: ['a', 'b'] }), 'hi a;hi b;');
});

test('loops: the loop variable shadows an outer variable, which is visible again after', () => {
  assert.equal(render('{{ x }}[for x in xs]{{ x }}[/for]{{ x }}', { x: 'out', xs: ['in'] }), 'outinout');
});

test('loops: nested loops see both loop variables', () => {
  const vars = { orders: [{ id: 1, items: ['a', 'b'] }, { id: 2, items: ['c'] }] };
  assert.equal(render('[for o in orders][for i in o.items]{{ o.id }}{{ i }} [/for][/for]', vars), '1a 1b 2c ');
});

test('loops: an inner loop variable shadows an outer one of the same name', () => {
  assert.equal(render('[for x in a]{{ x.v }}[for x in x.kids]{{ x }}[/for]{{ x.v }}[/for]', { a: [{ v: 'P', kids: ['k'] }] }), 'PkP');
});

test('loops: a non-array value renders the body zero times', () => {
  for (const items of ['abc', 42, { 0: 'x', length: 1 }, null, true]) {
    assert.equal(render('<[for i in items]x[/for]>', { items }), '<>');
  }
});

test('loops: a missing value renders the body zero times', () => {
  assert.equal(render('<[for i in items]x[/for]>'), '<>');
});

test('loops: an empty array renders the body zero times', () => {
  assert.equal(render('<[for i in items]x[/for]>', { items: [] }), '<>');
});

test('loops: loop.index is the 1-based position in the innermost loop', () => {
  const vars = { rows: [['a', 'b'], ['c']] };
  assert.equal(render('[for r in rows]{{ loop.index }}:[for c in r]{{ loop.index }}{{ c }}[/for] [/for]', vars), '1:1a2b 2:1c ');
});

test('loops: a root variable named "loop" is visible outside loops only', () => {
  assert.equal(render('{{ loop }}[for i in xs]{{ loop.index }}[/for]', { loop: 'L', xs: [0] }), 'L1');
});

test('loops: a loop variable named "loop" wins over the loop metadata', () => {
  assert.equal(render('[for loop in xs]{{ loop }}[/for]', { xs: ['a'] }), 'a');
});

// ——— contexts ———

test('html: values are HTML-escaped (& < > " \')', () => {
  assert.equal(render('<p title="{{ v }}">{{ v }}</p>', { v: `<a href="x">Tom & Jerry's</a>` }, 'html'),
    '<p title="&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;">&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;</p>');
});

test('html: template text and fallbacks are the author\'s and are not escaped', () => {
  assert.equal(render('<b>{{ name | "<i>friend</i>" }}</b> & co', {}, 'html'), '<b><i>friend</i></b> & co');
});

test('html: values inside loops are escaped too', () => {
  assert.equal(render('[for i in xs]{{ i }}[/for]', { xs: ['<', '&'] }, 'html'), '&lt;&amp;');
});

test('text: values are not escaped', () => {
  assert.equal(render('{{ v }}', { v: '<a> & "b" \'c\'' }, 'text'), '<a> & "b" \'c\'');
});

test('subject: values are not escaped', () => {
  assert.equal(render('Re: {{ v }}', { v: 'Tom & <Jerry>' }, 'subject'), 'Re: Tom & <Jerry>');
});

test('subject: CR, LF and CRLF in values become one space each', () => {
  assert.equal(render('Hi {{ v }}!', { v: 'a\r\nb\nc\rd' }, 'subject'), 'Hi a b c d!');
});

test('subject: line breaks in the template text become spaces too', () => {
  assert.equal(render('Your order\n[for i in xs]{{ i }}\r\n[/for]', { xs: ['a', 'b'] }, 'subject'), 'Your order a b ');
});

test('text: line breaks are kept', () => {
  assert.equal(render('a\r\n{{ v }}', { v: 'b\nc' }, 'text'), 'a\r\nb\nc');
});

// ——— values never re-enter parsing ———

test('values: a value that looks like a tag stays literal', () => {
  assert.equal(render('{{ v }}', { v: '{{ secret }}', secret: 'leak' }), '{{ secret }}');
});

test('values: a value that looks like a loop stays literal', () => {
  assert.equal(render('{{ v }}', { v: '[for a in b]x[/for]', b: [1] }), '[for a in b]x[/for]');
});

test('render: a compiled template renders many times with different variables', () => {
  const template = compileTemplate('Hi {{ name | there }}');
  assert.equal(renderTemplate(template, { name: 'A' }, 'text'), 'Hi A');
  assert.equal(renderTemplate(template, {}, 'text'), 'Hi there');
  assert.equal(renderTemplate(template, { name: 'B' }, 'text'), 'Hi B');
});
