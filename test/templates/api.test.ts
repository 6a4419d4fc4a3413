import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { checkTemplate, compileTemplate, parseTemplate } from '../../src/templates/index.js';

test('parseTemplate: a syntax error is a value with message, line and column', () => {
  const result = parseTemplate('line one\n[for x in items]');
  assert.equal(result.ok, false);
  assert.ok(!result.ok);
  assert.deepEqual(result.error, { message: 'unclosed loop: "[for x in items]" has no matching "[/for]"', line: 2, column: 1 });
});

test('checkTemplate: null for a valid template', () => {
  assert.equal(checkTemplate('Hi {{ name | there }} [for i in xs]{{ i }}[/for]'), null);
});

test('checkTemplate: the first error for an invalid one', () => {
  assert.deepEqual(checkTemplate('{{ }}'), { message: 'empty variable name', line: 1, column: 4 });
});

test('compileTemplate: throws AppError template_error with line and column in extra', () => {
  assert.throws(
    () => compileTemplate('ok\n  {{ a..b }}'),
    (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'template_error');
      assert.deepEqual(err.extra, { line: 2, column: 8 });
      assert.match(err.message, /bad path.*\(line 2, column 8\)$/);
      return true;
    },
  );
});

test('compileTemplate: returns the parsed template when valid', () => {
  assert.deepEqual(compileTemplate('a{{ b }}').nodes.length, 2);
});
