import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DomUtils, parseDocument } from 'htmlparser2';
import { NOTRACK_ATTRIBUTE, pixelTag, rewriteHtml } from '../../src/mail/html-rewrite.js';

const TRACKER = 'https://t.example/c/';
/** A recognisable tracked URL with an "&" in it, so escaping on write-back is visible. */
const clickUrl = (u: string) => `${TRACKER}?u=${encodeURIComponent(u)}&s=1`;
const tracked = (u: string) => `${TRACKER}?u=${encodeURIComponent(u)}&amp;s=1`;
const rewrite = (html: string) => rewriteHtml(html, { clickUrl });

/** The hrefs of <a>/<area> as a browser-like DOM sees them (decoded). */
function hrefs(html: string): (string | undefined)[] {
  const doc = parseDocument(html);
  return DomUtils.findAll((el) => el.name === 'a' || el.name === 'area', doc.children).map((el) => el.attribs.href);
}

test('rewriteHtml: a double-quoted http link goes through clickUrl, escaped on write-back', () => {
  assert.equal(rewrite('<p><a href="http://shop.example/x">Shop</a></p>'), `<p><a href="${tracked('http://shop.example/x')}">Shop</a></p>`);
});

test('rewriteHtml: single quotes are kept, and a quote in the new value is escaped', () => {
  const out = rewriteHtml(`<a href='https://a.example/'>x</a>`, { clickUrl: () => "https://t.example/it's" });
  assert.equal(out, `<a href='https://t.example/it&#39;s'>x</a>`);
  assert.deepEqual(hrefs(out), ["https://t.example/it's"]);
});

test('rewriteHtml: an unquoted href becomes double-quoted; neighbours keep their quoting', () => {
  assert.equal(
    rewrite('<a class=btn href=https://a.example/p title=\'t\'>x</a>'),
    `<a class=btn href="${tracked('https://a.example/p')}" title='t'>x</a>`,
  );
});

test('rewriteHtml: entities in the href are decoded before clickUrl sees the URL', () => {
  const seen: string[] = [];
  rewriteHtml('<a href="https://a.example/?x=1&amp;y=2&#38;z=3">x</a>', { clickUrl: (u) => (seen.push(u), u) });
  assert.deepEqual(seen, ['https://a.example/?x=1&y=2&z=3']);
});

test('rewriteHtml: a legacy "&name=" in an attribute is not an entity (as in browsers)', () => {
  const seen: string[] = [];
  rewriteHtml('<a href="https://a.example/?a=1&copy=2">x</a>', { clickUrl: (u) => (seen.push(u), u) });
  assert.deepEqual(seen, ['https://a.example/?a=1&copy=2']);
});

test('rewriteHtml: upper-case HREF and HTTP:// are tracked; the attribute name is kept as written', () => {
  assert.equal(rewrite('<A HREF="HTTP://A.EXAMPLE/">x</A>'), `<A HREF="${tracked('HTTP://A.EXAMPLE/')}">x</A>`);
});

test('rewriteHtml: surrounding whitespace in the href is trimmed; spacing around "=" is kept', () => {
  assert.equal(rewrite('<a href =\n" https://a.example/ ">x</a>'), `<a href =\n"${tracked('https://a.example/')}">x</a>`);
});

test('rewriteHtml: <area href> is tracked like <a href>', () => {
  assert.equal(rewrite('<map><area shape=rect href="https://a.example/">'), `<map><area shape=rect href="${tracked('https://a.example/')}">`);
});

test('rewriteHtml: mailto, tel, #anchor, relative, javascript, data and other schemes are untouched', () => {
  const html = [
    '<a href="mailto:help@example.com">m</a>',
    '<a href="tel:+15550100">t</a>',
    '<a href="#top">a</a>',
    '<a href="/relative/path">r</a>',
    '<a href="//cdn.example/x">p</a>',
    '<a href="javascript:alert(1)">j</a>',
    '<a href=" JavaScript:alert(1)">j</a>',
    '<a href="data:text/html,hi">d</a>',
    '<a href="ftp://files.example/">f</a>',
    '<a href="httpx://a.example/">x</a>',
    '<a href="">e</a>',
  ].join('');
  const seen: string[] = [];
  assert.equal(rewriteHtml(html, { clickUrl: (u) => (seen.push(u), u) }), html);
  assert.deepEqual(seen, []);
});

test('rewriteHtml: <a> without href, or with an empty href attribute, is untouched', () => {
  const html = '<a name="top">x</a><a>y</a><a href>z</a><a href href="https://a.example/">first href wins</a>';
  assert.equal(rewrite(html), html);
});

test('rewriteHtml: only the first href of a tag counts', () => {
  assert.equal(
    rewrite('<a href="https://one.example/" href="https://two.example/">x</a>'),
    `<a href="${tracked('https://one.example/')}" href="https://two.example/">x</a>`,
  );
});

test('rewriteHtml: data-postline-notrack leaves the link alone and is removed from the output', () => {
  assert.equal(NOTRACK_ATTRIBUTE, 'data-postline-notrack');
  assert.equal(rewrite('<a href="https://a.example/" data-postline-notrack>x</a>'), '<a href="https://a.example/">x</a>');
  assert.equal(rewrite('<a data-postline-notrack="" class="c" href="https://a.example/">x</a>'), '<a class="c" href="https://a.example/">x</a>');
  assert.equal(rewrite('<a\n  DATA-POSTLINE-NOTRACK\n  href=https://a.example/>x</a>'), '<a\n  href=https://a.example/>x</a>');
});

test('rewriteHtml: clickUrl returning null leaves that link as it is', () => {
  const html = '<a href="https://a.example/">a</a><a href="https://b.example/">b</a>';
  const out = rewriteHtml(html, { clickUrl: (u) => (u.includes('a.example') ? null : 'https://t.example/b') });
  assert.equal(out, '<a href="https://a.example/">a</a><a href="https://t.example/b">b</a>');
});

test('rewriteHtml: template leftovers in an href are rewritten as they are', () => {
  assert.equal(rewrite('<a href="https://a.example/?n={{ name }}">x</a>'), `<a href="${tracked('https://a.example/?n={{ name }}')}">x</a>`);
});

test('rewriteHtml: links inside comments and Outlook conditional comments are not touched', () => {
  const html =
    '<!--[if mso]><v:roundrect href="https://mso.example/"><a href="https://mso.example/">x</a></v:roundrect><![endif]-->' +
    '<!-- <a href="https://commented.example/"> -->' +
    '<![if !mso]><a href="https://visible.example/">y</a><![endif]>';
  assert.equal(
    rewrite(html),
    html.replace('href="https://visible.example/"', `href="${tracked('https://visible.example/')}"`),
  );
});

test('rewriteHtml: markup inside <script>, <style>, <title> and <textarea> is text', () => {
  const html =
    '<title><a href="https://1.example/"></title><style>a[href="https://2.example/"]{}</style>' +
    '<script>document.write(\'<a href="https://3.example/">\')</script><textarea><a href="https://4.example/"></textarea>';
  assert.equal(rewrite(html), html);
});

test('rewriteHtml: the footer then the pixel go just before </body>', () => {
  const out = rewriteHtml('<html><body><p>Hi</p></body></html>', {
    clickUrl,
    footerHtml: '<p class="footer">Unsubscribe</p>',
    pixelUrl: 'https://t.example/o/abc',
  });
  assert.equal(out, `<html><body><p>Hi</p><p class="footer">Unsubscribe</p>${pixelTag('https://t.example/o/abc')}</body></html>`);
});

test('rewriteHtml: the pixel is a hidden 1x1 image with an escaped src and empty alt', () => {
  assert.equal(
    pixelTag('https://t.example/o?a=1&b="2"'),
    '<img src="https://t.example/o?a=1&amp;b=&quot;2&quot;" width="1" height="1" alt="" style="display:none;width:1px;height:1px;border:0;" />',
  );
});

test('rewriteHtml: </BODY> in any case, the last one wins; one inside a comment or script is ignored', () => {
  const html = '<body>a</BODY ><!-- </body> --><script>"</body>"</script>';
  assert.equal(rewriteHtml(html, { clickUrl, footerHtml: '[F]' }), '<body>a[F]</BODY ><!-- </body> --><script>"</body>"</script>');
  assert.equal(rewriteHtml('<body>a</body>b</body>c', { clickUrl, footerHtml: '[F]' }), '<body>a</body>b[F]</body>c');
});

test('rewriteHtml: without </body> the insertion goes before </html>, else at the end', () => {
  assert.equal(rewriteHtml('<html><p>x</p></html>\n', { clickUrl, footerHtml: '[F]' }), '<html><p>x</p>[F]</html>\n');
  assert.equal(rewriteHtml('<p>fragment</p>', { clickUrl, footerHtml: '[F]', pixelUrl: 'https://t/o' }), `<p>fragment</p>[F]${pixelTag('https://t/o')}`);
});

test('rewriteHtml: no pixel and no footer when neither is given', () => {
  const html = '<html><body><p>x</p></body></html>';
  assert.equal(rewrite(html), html);
});

test('rewriteHtml: everything but the tracked href value is preserved byte for byte', () => {
  const html =
    '<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN">\r\n' +
    '<html xmlns:v="urn:schemas-microsoft-com:vml"><head><meta charset=utf-8>' +
    '<style>td { color: #333 }</style></head>\r\n<body style="margin:0">' +
    '<table><tr><td align=center>&nbsp;&copy; 2024 &#x1F600; <b>bold<i>mis-nested</b></i>' +
    '<a  style="color:red"   href="https://a.example/"   target=_blank >Go</a>' +
    '<img src=logo.png alt=\'Logo\'/><br/></td></tr></table>\r\n</body></html>';
  const out = rewrite(html);
  assert.equal(out, html.replace('href="https://a.example/"', `href="${tracked('https://a.example/')}"`));
});

test('rewriteHtml: malformed markup does not throw', () => {
  for (const html of [
    '<a href="https://a.example/',
    '<a href=',
    '<a href',
    '<<<a>>> </a </ a> <a href="https://a.example/"',
    '<!-- never closed <a href="https://a.example/">',
    '<![CDATA[ <a href="https://a.example/"> ]]>',
    '</body></body></html><body>',
    '<svg><a href="https://a.example/"/></svg><math><mi><a href="https://b.example/">',
    '\u0000<a\u0000href="https://a.example/">',
  ]) {
    assert.doesNotThrow(() => rewriteHtml(html, { clickUrl, pixelUrl: 'https://t/o', footerHtml: '<p>f</p>' }));
  }
});

// --- properties -----------------------------------------------------------------------

/** HTML-ish fragments with no links at all (and the odd characters that stress a tokenizer). */
const linkFree = fc
  .array(
    fc.oneof(
      fc.string(),
      fc.constantFrom(
        '<p>', '</p>', '<div class="x" id=\'y\' data-a=b>', '</div>', '<br/>', '<img src="x.png" alt="">',
        '<a name="top">', '<a>', '</a>', '<!-- c -->', '<!--[if mso]><table><![endif]-->', '<![if !mso]>',
        '<![endif]>', '&amp;', '&nbsp;', '&#169;', '&bogus;', '<', '>', '&', '"', "'", '<body>', '</body>',
        '</BODY>', '<html>', '</html>', '<script>var x = "<a>";</script>', '<style>p{}</style>', '<title>t</title>',
        '\r\n', '<?xml version="1.0"?>', '<!DOCTYPE html>', '<svg><circle r="1"/></svg>', '<table><tr><td>',
      ),
    ),
    { maxLength: 30 },
  )
  .map((parts) => parts.join(''))
  .filter((html) => !/href/i.test(html));

test('property: a document without links comes back unchanged, plus only the inserted footer and pixel', () => {
  const insert = '<p>FOOTER-7c1e</p>' + pixelTag('https://t.example/o/PIXEL-7c1e');
  fc.assert(
    fc.property(linkFree, (html) => {
      assert.equal(rewrite(html), html);
      const out = rewriteHtml(html, { clickUrl, footerHtml: '<p>FOOTER-7c1e</p>', pixelUrl: 'https://t.example/o/PIXEL-7c1e' });
      const at = out.indexOf(insert);
      assert.ok(at >= 0, 'insertion present');
      assert.equal(out.indexOf(insert, at + 1), -1, 'inserted once');
      assert.equal(out.slice(0, at) + out.slice(at + insert.length), html);
    }),
    { numRuns: 500 },
  );
});

const urls = fc.constantFrom(
  'https://a.example/',
  'http://b.example/x?y=1&z=2',
  'HTTPS://C.EXAMPLE/Path',
  ' https://d.example/ ',
  'mailto:x@example.com',
  'tel:+1555',
  '#anchor',
  '/relative',
  'javascript:alert(1)',
  'https://e.example/?q="quoted"&r=\'single\'',
  'https://f.example/{{ name }}',
);
const escapeFor = (url: string, quote: string) =>
  url.replace(/&/g, '&amp;').replace(/"/g, quote === '"' ? '&quot;' : '"').replace(/'/g, quote === "'" ? '&#39;' : "'");
const link = fc.record({ url: urls, quote: fc.constantFrom('"', "'", ''), tag: fc.constantFrom('a', 'A', 'area'), notrack: fc.boolean(), text: fc.string({ maxLength: 5 }) }).map(
  ({ url, quote, tag, notrack, text }) => {
    const q = quote === '' && /[\s"'=<>`]/.test(url) ? '"' : quote;
    const value = q === '' ? url.replace(/&/g, '&amp;') : escapeFor(url, q);
    return `<${tag} ${notrack ? 'data-postline-notrack ' : ''}href=${q}${value}${q}>${text.replace(/[<&]/g, '')}</${tag}>`;
  },
);

test('property: every http(s) link, and only those, is tracked; a DOM parse of the output agrees', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(link, linkFree), { maxLength: 12 }), (parts) => {
      const html = parts.join('');
      const out = rewrite(html);
      const before = parseDocument(html);
      const elements = DomUtils.findAll((el) => el.name === 'a' || el.name === 'area', before.children);
      const expected = elements.map((el) => {
        const href = el.attribs.href;
        if (href === undefined || NOTRACK_ATTRIBUTE in el.attribs) return href;
        const url = href.trim();
        return /^https?:\/\//i.test(url) ? clickUrl(url) : href;
      });
      assert.deepEqual(hrefs(out), expected);
      const after = DomUtils.findAll((el) => el.name === 'a' || el.name === 'area', parseDocument(out).children);
      assert.ok(after.every((el) => !(NOTRACK_ATTRIBUTE in el.attribs)), 'notrack marker removed');
    }),
    { numRuns: 300 },
  );
});

test('property: arbitrary input never throws', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (html) => {
      rewriteHtml(html, { clickUrl, pixelUrl: 'https://t/o', footerHtml: 'f' });
    }),
    { numRuns: 1000 },
  );
});

/**
 * A document's link sites are parsed once and reused for its later copies (a campaign's
 * recipients): over 2,000 seeded documents of every link shape, a copy written from the
 * cached sites is the copy a fresh parse writes, and clickUrl is asked the same URLs in the
 * same order. Fresh parses come from the cache having forgotten the document (it keeps 64).
 */
test('rewriteHtml: copies written from a document’s cached link sites equal fresh parses over 2,000 seeded documents', () => {
  let seed = 0x51e5;
  const pick = <T>(xs: readonly T[]): T => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return xs[seed % xs.length];
  };
  const urls = ['https://shop.example/a?x=1&amp;y=2', 'HTTP://Up.Example/Z', ' https://pad.example/ ', 'mailto:a@example.com', '/relative', '#top', 'tel:+1555', 'https://e.example/&#233;t&eacute;', 'javascript:void(0)'];
  const pieces = [
    () => `<a href="${pick(urls)}">x</a>`,
    () => `<a href='${pick(urls)}' class=q>y</a>`,
    () => `<A HREF = "${pick(urls)}">z</A>`,
    () => `<a href=${pick(urls).trim().replace(/\s/g, '')}>u</a>`,
    () => `<a ${NOTRACK_ATTRIBUTE} href="${pick(urls)}">n</a>`,
    () => `<a href="${pick(urls)}"\n  ${NOTRACK_ATTRIBUTE}="1">n2</a>`,
    () => `<area href="${pick(urls)}" alt="">`,
    () => `<a href="${pick(urls)}" href="https://second.example/">d</a>`,
    () => `<a href>empty</a>`,
    () => `<!--[if mso]><a href="${pick(urls)}">c</a><![endif]-->`,
    () => `<style>a[href="https://s.example/"]{}</style>`,
    () => `<p>Hello &amp; welcome, ${pick(['Ana', 'Zoë', '李'])}</p>`,
    () => `<img src="https://img.example/i.png">`,
  ];
  const docs = Array.from({ length: 2000 }, (_, i) => {
    const body = Array.from({ length: 1 + (i % 9) }, () => pick(pieces)()).join('\n');
    return pick([`<html><body>${body}</body></html>`, `<html>${body}</html>`, body, `<body>${body}</BODY>\n`]);
  });
  const copy = (doc: string, recipient: string) => {
    const asked: string[] = [];
    const html = rewriteHtml(doc, {
      clickUrl: (u) => (asked.push(u), u.includes('second') ? null : `https://t.example/c/${recipient}?u=${encodeURIComponent(u)}&s=1`),
      pixelUrl: `https://t.example/o/${recipient}`,
      footerHtml: `<p>unsubscribe ${recipient}</p>`,
    });
    return { html, asked };
  };
  const cachedCopies = docs.map((doc) => {
    const first = copy(doc, 'r1');
    // The document's sites are cached now: the same copy again, and another recipient's.
    assert.deepEqual(copy(doc, 'r1'), first);
    return copy(doc, 'r2');
  });
  // Each document was forgotten since (2,000 others came after it): parsed afresh.
  docs.forEach((doc, i) => assert.deepEqual(copy(doc, 'r2'), cachedCopies[i], doc));
});
