import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors.js';
import { TemplateCache } from '../../src/templates/cache.js';
import { compileTemplate, fieldsOf, renderTemplate } from '../../src/templates/index.js';
import { seededRandom } from '../helpers/dkim-corpus.js';

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

test('TemplateCache: sources met again through the recent-source check keep the least-recently-used order exact', () => {
  const cache = new TemplateCache({ maxChars: 30, maxEntryChars: 30 });
  const a = cache.compile('a'.repeat(10));
  const b = cache.compile('b'.repeat(10));
  cache.compile('c'.repeat(10));
  // a and b are both among the recent sources: a is asked for again (a fresh string, equal content).
  assert.equal(cache.compile('a'.repeat(10).slice(0)), a);
  cache.compile('d'.repeat(10)); // the oldest is b now, not a
  assert.equal(cache.compile('a'.repeat(10)), a, 'a stayed');
  assert.notEqual(cache.compile('b'.repeat(10)), b, 'b was dropped and parsed again');
});

test('TemplateCache: a recent source that was dropped is parsed again and kept again, counted once', () => {
  const cache = new TemplateCache({ maxChars: 20, maxEntryChars: 20 });
  const a = cache.compile('a'.repeat(10));
  cache.compile('b'.repeat(10));
  cache.compile('c'.repeat(10)); // a goes: 30 > 20
  assert.equal(cache.size, 2);
  const again = cache.compile('a'.repeat(10));
  assert.notEqual(again, a, 'a was dropped, so it is parsed again though it was a recent source');
  assert.equal(cache.size, 2);
  assert.equal(cache.compile('a'.repeat(10)), again);
  // Each source is counted once: three more distinct sources of 10 leave exactly two kept.
  for (const ch of 'xyz') cache.compile(ch.repeat(10));
  assert.equal(cache.size, 2);
});

test('TemplateCache: hits, misses and size follow a plain least-recently-used map over 3,000 seeded calls', () => {
  const random = seededRandom(4711);
  const sources = Array.from({ length: 12 }, (_, i) => `${String.fromCharCode(97 + i)}{{ v }}`.padEnd(4 + Math.floor(random() * 12), 'x'));
  const cache = new TemplateCache({ maxChars: 60, maxEntryChars: 14 });
  // The model: what the cache did before the recent-source check, a Map in use order.
  const model = new Map<string, true>();
  let modelChars = 0;
  const last = new Map<string, object>();
  for (let i = 0; i < 3000; i++) {
    // Mostly the same two or three sources, as an integration sends; now and then others.
    const source = sources[random() < 0.7 ? Math.floor(random() * 3) : Math.floor(random() * sources.length)];
    const expectHit = model.has(source);
    if (expectHit) {
      model.delete(source);
      model.set(source, true);
    } else if (source.length <= 14) {
      model.set(source, true);
      modelChars += source.length;
      for (const oldest of model.keys()) {
        if (modelChars <= 60) break;
        model.delete(oldest);
        modelChars -= oldest.length;
      }
    }
    const template = cache.compile(source.split('').join('')); // a fresh string each time
    assert.equal(template === last.get(source), expectHit, `call ${i}: ${source} ${expectHit ? 'hit' : 'miss'}`);
    last.set(source, template);
    assert.equal(cache.size, model.size, `call ${i}`);
  }
});
