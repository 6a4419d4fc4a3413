import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileTemplate, escapeHtml, parseTemplate, renderTemplate } from '../../src/templates/index.js';

/** Strings rich in the characters the language cares about, so edge cases come up often. */
const trickyText = fc
  .array(
    fc.oneof(
      fc.constantFrom('{', '}', '{{', '}}', '[', ']', '/', 'for', 'in', ' ', '\n', '\r', '|', '"', "'", '\\', '.', '<', '>', '&'),
      fc.string({ unit: 'binary', maxLength: 4 }),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''));

const anyText = fc.oneof(trickyText, fc.string({ unit: 'binary' }));

/** Removes the five entities escapeHtml produces; what is left must hold no special character. */
function withoutEntities(html: string): string {
  return html.replace(/&(amp|lt|gt|quot|#39);/g, '');
}

function unescapeHtml(html: string): string {
  return html.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[name] ?? '');
}

const hasTags = (s: string) => s.includes('{{') || s.includes('[for') || s.includes('[/for]');

// Literal text free of special characters, so any one in the output came from a value.
const tagged = compileTemplate('title={{ v }} [for i in list]({{ i.name | none }} {{ i }})[/for]');

test('property: in html no raw < > " \' or stray & from any value passes through', () => {
  fc.assert(
    fc.property(fc.anything(), fc.array(fc.oneof(anyText, fc.record({ name: anyText }))), (v, list) => {
      const out = renderTemplate(tagged, { v, list }, 'html');
      assert.doesNotMatch(withoutEntities(out), /[<>"'&]/);
    }),
  );
});

test('property: html escaping is reversible (the value is shown exactly)', () => {
  fc.assert(
    fc.property(anyText, (v) => {
      const out = renderTemplate(compileTemplate('{{ v }}'), { v }, 'html');
      assert.equal(unescapeHtml(out), v);
      assert.doesNotMatch(withoutEntities(out), /[<>"'&]/);
    }),
  );
});

test('property: a template with no tags renders unchanged in html and text', () => {
  fc.assert(
    fc.property(anyText.filter((s) => !hasTags(s)), (source) => {
      const template = compileTemplate(source);
      assert.equal(renderTemplate(template, {}, 'html'), source);
      assert.equal(renderTemplate(template, {}, 'text'), source);
    }),
  );
});

test('property: a subject never contains CR or LF', () => {
  fc.assert(
    fc.property(anyText.filter((s) => !hasTags(s)), anyText, (source, v) => {
      const out = renderTemplate(compileTemplate(`{{ v }}|${source}`), { v }, 'subject');
      assert.doesNotMatch(out, /[\r\n]/);
    }),
  );
});

test('property: a rendered value never re-enters parsing', () => {
  const tagLike = fc
    .array(fc.oneof(fc.constantFrom('{{x}}', '{{ x | y }}', '[for a in b]', 'x', '[/for]', '{{', '}}', '[for '), anyText))
    .map((parts) => parts.join(''));
  const template = compileTemplate('A{{ v }}B[for i in list]({{ i }})[/for]');
  fc.assert(
    fc.property(tagLike, fc.array(tagLike, { maxLength: 3 }), (v, list) => {
      const vars = { v, list, x: 'EXPANDED', b: ['LOOPED'] };
      const expected = `A${v}B${list.map((i) => `(${i})`).join('')}`;
      assert.equal(renderTemplate(template, vars, 'text'), expected);
      assert.equal(renderTemplate(template, vars, 'html'), `A${escapeHtml(v)}B${list.map((i) => `(${escapeHtml(i)})`).join('')}`);
    }),
  );
});

test('property: parsing any input returns a result, never throws, with a 1-based position', () => {
  fc.assert(
    fc.property(anyText, (source) => {
      const result = parseTemplate(source);
      if (!result.ok) {
        assert.ok(result.error.line >= 1 && result.error.column >= 1);
        assert.ok(result.error.message.length > 0);
      }
    }),
    { numRuns: 2000 },
  );
});
