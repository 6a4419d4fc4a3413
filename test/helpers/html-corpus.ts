/**
 * A seeded corpus of HTML documents for the differential tests of the narrow HTML paths
 * (the link-site scanner, decision 0042): every construct a tokenizer can read differently
 * (comments in all their spellings, Outlook conditional comments, CDATA, doctypes, bogus
 * comments, processing instructions, raw-text elements and near misses of their close tags,
 * entities in hrefs, single/double/no quotes, spacing around "=", upper-case names, duplicate
 * and valueless hrefs, notrack markers, `<a` inside attribute values, close tags with
 * whitespace, stray "<", truncated documents, foreign content) mixed into ordinary email
 * markup. The same seed gives the same corpus, so a failure names a document to rebuild.
 */
import { seededRandom } from './dkim-corpus.js';

export interface CorpusDocument {
  index: number;
  html: string;
}

const URLS = [
  'https://shop.example/a?x=1&amp;y=2',
  'https://shop.example/a?x=1&y=2',
  'HTTP://Up.Example/Z',
  ' https://pad.example/ ',
  '\thttps://tab.example/\n',
  'https://e.example/&#233;t&eacute;&#x26;&#38;',
  'https://legacy.example/?a=1&copy=2&amp',
  'https://q.example/?q=&quot;x&quot&lt;',
  'https://n.example/&#0;&#128;&#x110000;&bogus;&;',
  'mailto:a@example.com',
  '/relative',
  '#top',
  'tel:+1555',
  'javascript:void(0)',
  'httpx://no.example/',
  '',
  'https://tpl.example/?n={{ name }}',
  'https://x.example/path>with>gt',
  "https://x.example/it's",
  'https://x.example/say"hi"',
  'https://u.example/ünï/李',
];

const TEXTS = [
  'Hello &amp; welcome', 'Zoë', '李', 'a < b', 'a<1', '5 > 3', '&copy; 2026', '&bogus', '& alone',
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit.', '\r\n', '\n', '   ', '<', '>', '&', '"', "'", '=',
];

export function generateHtmlCorpus(size: number, seed: number): CorpusDocument[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => random() < p;
  const caseOf = (s: string) => pick([s, s.toUpperCase(), s[0].toUpperCase() + s.slice(1)]);
  const ws = () => pick(['', ' ', '  ', '\n', '\t', '\r\n ', '\f']);
  const sep = () => pick([' ', ' ', '\n  ', '\t', '/']);

  const quoted = (value: string): string => {
    const q = pick(['"', "'", '']);
    if (q === '') return value.replace(/[\s>]/g, '');
    return q + value.split(q).join(q === '"' ? '&quot;' : '&#39;') + q;
  };
  const attribute = (name: string, value?: string) =>
    value === undefined ? caseOf(name) : `${caseOf(name)}${ws()}=${ws()}${quoted(value)}`;
  const otherAttribute = () =>
    pick([
      attribute('class', 'btn'),
      attribute('style', 'color:red; font: 12px/1.5 x'),
      attribute('title', pick(['a > b', '<a href="https://inner.example/">', "it's"])),
      attribute('target', '_blank'),
      attribute('data-x'),
      attribute('alt', ''),
      attribute('hreflang', 'en'),
      attribute('xhref', 'https://not-href.example/'),
      '=odd',
      '"quoted-name"=1',
      "a'b",
    ]);

  const link = (): string => {
    const tag = pick(['a', 'a', 'a', 'A', 'area', 'AREA', 'abbr', 'article']);
    const attrs: string[] = [];
    for (let i = int(3); i > 0; i--) attrs.push(otherAttribute());
    const hrefs = chance(0.1) ? 2 : chance(0.05) ? 0 : 1;
    for (let i = 0; i < hrefs; i++) attrs.splice(int(attrs.length + 1), 0, chance(0.05) ? caseOf('href') : attribute('href', pick(URLS)));
    if (chance(0.2)) attrs.splice(int(attrs.length + 1), 0, chance(0.5) ? attribute('data-postline-notrack') : attribute('data-postline-notrack', pick(['', '1', 'yes'])));
    if (chance(0.05)) attrs.push(attribute('data-postline-notrack'));
    const open = `<${tag}${attrs.map((a) => sep() + a).join('')}${ws()}${pick(['>', '>', '/>', ' />'])}`;
    return tag.startsWith('area') ? open : `${open}${pick(TEXTS)}</${tag}${pick(['', ' '])}>`;
  };

  const rawText = (): string => {
    const name = pick(['script', 'style', 'title', 'textarea', 'xmp', 'iframe', 'noembed', 'noframes']);
    const inner = pick([
      `<a href="https://inside.example/">x</a>`,
      `document.write('<a href="https://w.example/">')`,
      `a[href="https://s.example/"]{}`,
      `</${name}x> still inside <a href="https://still.example/">`,
      `< /${name}> <${name}>`,
      `&amp; &lt;/${name}&gt;`,
      '</body></html>',
      '',
    ]);
    const close = pick([`</${name}>`, `</${caseOf(name)} >`, `</${name}/>`, `</${name}\n>`, `</${name}`, '']);
    return `<${caseOf(name)}${pick(['', ' type="text/x"', '/'])}>${inner}${close}`;
  };

  const comment = (): string =>
    pick([
      `<!-- <a href="https://commented.example/"> -->`,
      `<!--[if mso]><a href="https://mso.example/">m</a><![endif]-->`,
      `<!--[if !mso]><!-- --><a href="https://nonmso.example/">n</a><!--<![endif]-->`,
      '<![if !mso]>', '<![endif]>', '<!-->', '<!--->', '<!---->', '<!-- a -- b -->', '<!-- x --!>', '<!-- x --!- -->',
      '<!-- x ---->', '<!--', '<!-', '<!->', '<!-x>', '<!>', '<!DOCTYPE html>', '<!doctype html public "x">', '<!docx <a href="https://decl.example/">>',
      '<![CDATA[ <a href="https://cdata.example/"> ]]>', '<![CDATA[ x ]]]>', '<![CDAT <a href="https://nearcdata.example/">',
      '<?xml version="1.0"?>', '<? <a href="https://pi.example/"> ?>', '<!-- </body> -->',
    ]);

  const closeTag = (): string =>
    pick([
      '</body>', '</BODY >', '</body/x>', '</ body>', '</body\n>', '</html>', '</HTML>', '</bodyx>', '</>', '</1>', '</p>', '</br>', '</form>',
      '</a>', '</ a href="https://closing.example/">', '</ <a href="https://bogus-close.example/">', '</1 </body>', '</a href="https://closing2.example/">',
    ]);

  const misc = (): string =>
    pick([
      '<p>', '<div class="x">', '</div>', '<br/>', '<img src="https://img.example/i.png" alt="">', '<table><tr><td align=center>',
      '<form><form action="https://f.example/">', '<image src=x>', '< a href="https://spaced.example/">', '<<a href="https://double.example/">x</a>',
      '<a', '<a href="https://unclosed.example/', '<a href=', '<1>', '<=>', '<a\u0000href="https://nul.example/">',
      '<p title="<a href=\'https://in-attr.example/\'>">', `<a href="https://amp.example/?a=1&amp;b=2">x</a>`,
      '<plaintext>', '<scripts>', '<scr>', '<titles>', '<textareax>',
    ]);

  const foreign = (): string =>
    pick([
      '<svg><a href="https://svg.example/"/><style><a href="https://svgstyle.example/"></style></svg>',
      '<math><mi><a href="https://math.example/">m</a></mi></math>',
      '<SVG><title><a href="https://svgtitle.example/"></title></SVG>',
      '\u000f', '\u001c/script>',
    ]);

  const piece = (): string => {
    const r = random();
    if (r < 0.3) return link();
    if (r < 0.45) return pick(TEXTS);
    if (r < 0.57) return comment();
    if (r < 0.67) return rawText();
    if (r < 0.77) return closeTag();
    if (r < 0.97) return misc();
    return foreign();
  };

  const docs: CorpusDocument[] = [];
  for (let index = 0; index < size; index++) {
    const parts = Array.from({ length: 1 + int(14) }, piece).join(pick(['', '\n', ' ']));
    let html = pick([
      `<html><body>${parts}</body></html>`,
      `<!DOCTYPE html>\r\n<html><head><title>T</title></head><body style="margin:0">${parts}</BODY>\n</HTML>\n`,
      `<html>${parts}</html>`,
      parts,
      `<body>${parts}</body>${pick(['', '<!-- trailer -->', '</body>'])}`,
    ]);
    // A tenth are cut short anywhere: unterminated tags, attribute values, comments.
    if (chance(0.1)) html = html.slice(0, int(html.length + 1));
    docs.push({ index, html });
  }
  return docs;
}
