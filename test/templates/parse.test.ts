import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTemplate, parseTemplate, type TemplateError } from '../../src/templates/index.js';

/** Asserts the template fails at line/column with a message containing `fragment`. */
function assertError(source: string, fragment: string, line: number, column: number): void {
  const error = checkTemplate(source);
  assert.ok(error, `expected a syntax error for ${JSON.stringify(source)}`);
  assert.match(error.message, new RegExp(escapeRegExp(fragment)));
  assert.deepEqual({ line: error.line, column: error.column }, { line, column }, error.message);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function nodes(source: string) {
  const result = parseTemplate(source);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.template.nodes;
}

test('parse: a variable tag becomes a variable node with its path split', () => {
  assert.deepEqual(nodes('Hi {{ user.first_name }}!'), [
    { kind: 'text', value: 'Hi ' },
    { kind: 'variable', head: 'user', rest: ['first_name'], fallback: null },
    { kind: 'text', value: '!' },
  ]);
});

test('parse: whitespace inside braces is ignored, including none and line breaks', () => {
  const expected = [{ kind: 'variable', head: 'name', rest: [], fallback: null }];
  assert.deepEqual(nodes('{{name}}'), expected);
  assert.deepEqual(nodes('{{ \t\n name \r\n }}'), expected);
});

test('parse: a bare fallback is the words up to "}}", trimmed', () => {
  assert.deepEqual(nodes('{{ first_name |  dear  customer  }}'), [
    { kind: 'variable', head: 'first_name', rest: [], fallback: 'dear  customer' },
  ]);
});

test('parse: a double-quoted fallback keeps its spaces and unescapes \\"', () => {
  assert.deepEqual(nodes('{{ a | " say \\"hi\\" " }}')[0], { kind: 'variable', head: 'a', rest: [], fallback: ' say "hi" ' });
});

test("parse: a single-quoted fallback unescapes \\' and may contain }}", () => {
  assert.deepEqual(nodes("{{ a | 'it\\'s }}' }}")[0], { kind: 'variable', head: 'a', rest: [], fallback: "it's }}" });
});

test('parse: in a quoted fallback \\\\ is one backslash and other backslashes stay', () => {
  assert.deepEqual(nodes('{{ a | "C:\\\\dir\\n" }}')[0], { kind: 'variable', head: 'a', rest: [], fallback: 'C:\\dir\\n' });
});

test('parse: a quoted string alone in a tag is literal text (how to write "{{")', () => {
  assert.deepEqual(nodes('{{ "{{" }} and {{ \'[for\' }}'), [
    { kind: 'text', value: '{{' },
    { kind: 'text', value: ' and ' },
    { kind: 'text', value: '[for' },
  ]);
});

test('parse: names may contain digits, "_" and "-"; later path segments may be indexes', () => {
  assert.deepEqual(nodes('{{ _a-b2.items.0.x_y }}')[0], { kind: 'variable', head: '_a-b2', rest: ['items', '0', 'x_y'], fallback: null });
});

test('parse: loops nest and collect their bodies', () => {
  assert.deepEqual(nodes('[for o in orders]<[for i in o.items]{{ i }}[/for]>[/for]'), [
    {
      kind: 'loop',
      variable: 'o',
      head: 'orders',
      rest: [],
      body: [
        { kind: 'text', value: '<' },
        { kind: 'loop', variable: 'i', head: 'o', rest: ['items'], body: [{ kind: 'variable', head: 'i', rest: [], fallback: null }] },
        { kind: 'text', value: '>' },
      ],
    },
  ]);
});

test('parse: a loop header may spread over whitespace and line breaks', () => {
  assert.equal(nodes('[for\n  item   in\titems ][/for]')[0]?.kind, 'loop');
});

test('parse: a lone "}}" outside a tag is literal text', () => {
  assert.deepEqual(nodes('a }} b'), [{ kind: 'text', value: 'a }} b' }]);
});

test('parse: a single "{" is literal text', () => {
  assert.deepEqual(nodes('body { color: red } {x}'), [{ kind: 'text', value: 'body { color: red } {x}' }]);
});

test('parse: brackets that do not start "[for " or "[/for]" are literal text', () => {
  const source = '[1] [x] [for] [format] [For x in y] [/fo] [/for ] [ for x in y]';
  assert.deepEqual(nodes(source), [{ kind: 'text', value: source }]);
});

test('parse: an empty template is an empty node list', () => {
  assert.deepEqual(nodes(''), []);
});

// ——— errors: every kind, with its line and column ———

test('error: unbalanced braces — "{{" never closed, reported at the "{{"', () => {
  assertError('Hello\n  {{ name', 'unbalanced braces', 2, 3);
});

test('error: unbalanced braces — a "{{" inside a tag, reported at the first "{{"', () => {
  assertError('{{ a {{ b }}', 'unbalanced braces', 1, 1);
});

test('error: unbalanced braces — a tag closed by a single "}"', () => {
  assertError('x {{ a } y', 'unbalanced braces', 1, 3);
});

test('error: unbalanced braces — a bare fallback running into another tag', () => {
  assertError('{{ a | there Hello {{ b }}', 'unbalanced braces', 1, 1);
});

test('error: unexpected character in a tag, reported at the character', () => {
  assertError('{{ a b }}', 'unexpected "b" in tag', 1, 6);
});

test('error: empty variable name, reported where the name was expected', () => {
  assertError('{{}}', 'empty variable name', 1, 3);
  assertError('ab\n{{   }}', 'empty variable name', 2, 6);
  assertError('{{ | x }}', 'empty variable name', 1, 4);
});

test('error: bad path "a..b", reported at the second dot', () => {
  assertError('{{ a..b }}', 'bad path', 1, 6);
});

test('error: bad path with a trailing dot', () => {
  assertError('{{ a. }}', 'bad path', 1, 6);
});

test('error: bad path with a leading dot', () => {
  assertError('{{ .a }}', 'bad path', 1, 4);
});

test('error: bad path starting with a digit', () => {
  assertError('{{ 1x }}', 'must start with a letter', 1, 4);
});

test('error: empty bare fallback after "|"', () => {
  assertError('{{ a | }}', 'expected a fallback', 1, 8);
});

test('error: unterminated quoted fallback, reported at the quote', () => {
  assertError('{{ a | "dear }}', 'unterminated string', 1, 8);
});

test('error: text after a quoted fallback', () => {
  assertError('{{ a | "x" y }}', 'unexpected "y"', 1, 12);
});

test('error: unclosed [for], reported at the "[for"', () => {
  assertError('a\n b [for item in items]\n{{ item }}', 'unclosed loop: "[for item in items]"', 2, 4);
});

test('error: unclosed inner [for] in nested loops, reported at the inner one', () => {
  assertError('[for a in b]\n[for c in d]\n[/for]', 'unclosed loop: "[for a in b]"', 1, 1);
  assertError('[for a in b][/for]\n  [for c in d]', 'unclosed loop: "[for c in d]"', 2, 3);
});

test('error: stray [/for], reported at it', () => {
  assertError('x\r\n[for a in b][/for][/for]', 'stray "[/for]"', 2, 19);
});

test('error: bad loop header — missing "in" ([for x items])', () => {
  assertError('[for x items][/for]', 'expected "in"', 1, 8);
});

test('error: bad loop header — loop variable starting with a digit ([for 1x in y])', () => {
  assertError('[for 1x in y][/for]', 'loop variable must start with a letter', 1, 6);
});

test('error: bad loop header — dotted loop variable', () => {
  assertError('[for a.b in y][/for]', 'expected "in"', 1, 7);
});

test('error: bad loop header — missing path after "in"', () => {
  assertError('[for x in][/for]', 'expected a path after "in"', 1, 10);
  assertError('[for x in ][/for]', 'expected a path after "in"', 1, 11);
});

test('error: bad loop header — bad path ([for x in a..b])', () => {
  assertError('[for x in a..b][/for]', 'bad path', 1, 13);
});

test('error: bad loop header — extra word before "]"', () => {
  assertError('[for x in y z][/for]', 'expected "]"', 1, 13);
});

test('error: bad loop header — never closed by "]", reported at the "[for"', () => {
  assertError('ok\n[for x in y', 'never closed by "]"', 2, 1);
});

test('error: bad loop header — missing loop variable', () => {
  assertError('[for ][/for]', 'expected a loop variable', 1, 6);
  assertError('x [for ', 'never closed by "]"', 1, 3);
});

test('error: columns count characters, not UTF-16 units', () => {
  assertError('😀é {{ }}', 'empty variable name', 1, 7);
});

test('error: the first error wins', () => {
  const error = checkTemplate('{{ a..b }} [/for]') as TemplateError;
  assert.equal(error.column, 6);
});
