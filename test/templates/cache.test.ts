import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { TemplateCache } from '../../src/templates/cache.js';
import { compileTemplate, fieldsOf, renderTemplate } from '../../src/templates/index.js';

test('TemplateCache: a source seen again is the same parse, and renders as a fresh parse does', () => {
  const cache = new TemplateCache({ maxChars: 1000, maxEntryChars: 100 });
  const source = 'Hi {{ name | there }} [for i in xs]{{ i }},[/for]';
  const first = cache.compile(source);
  assert.equal(cache.compile(source), first);
  assert.equal(cache.compile(`${source}`.slice(0)), first, 'found by content, not by string identity');
  const vars = { name: 'Ada', xs: [1, 2] };
  assert.equal(renderTemplate(first, vars, 'text'), renderTemplate(compileTemplate(source), vars, 'text'));
  assert.equal(fieldsOf(first), fieldsOf(first), 'field uses are found once per template');
});

test('TemplateCache: holds at most maxChars of source, dropping the least recently used first', () => {
  const cache = new TemplateCache({ maxChars: 30, maxEntryChars: 30 });
  const a = cache.compile('a'.repeat(10));
  const b = cache.compile('b'.repeat(10));
  cache.compile('c'.repeat(10));
  assert.equal(cache.size, 3);
  assert.equal(cache.compile('a'.repeat(10)), a, 'a hit makes a the newest');
  cache.compile('d'.repeat(10)); // 40 chars: the oldest, b, goes
  assert.equal(cache.size, 3);
  assert.notEqual(cache.compile('b'.repeat(10)), b, 'b was dropped and parsed again');
  assert.equal(cache.compile('d'.repeat(10)), cache.compile('d'.repeat(10)));
});

test('TemplateCache: a source past maxEntryChars is parsed every time and not kept; one that does not parse is never kept', () => {
  const cache = new TemplateCache({ maxChars: 1000, maxEntryChars: 10 });
  const long = 'x'.repeat(11);
  assert.notEqual(cache.compile(long), cache.compile(long));
  assert.equal(cache.size, 0);
  for (let i = 0; i < 2; i++) {
    assert.throws(() => cache.compile('{{ }}'), (err: unknown) => err instanceof AppError && err.code === 'template_error');
  }
  assert.equal(cache.size, 0);
});
