/**
 * A seeded corpus of email-like HTML documents for the differential test of the blockwise
 * text part (decision 0042): heads with titles, styles and scripts, bodies of paragraphs,
 * headings and divs holding words of every length (past the 78-column wrap), entities,
 * whitespace of every kind (tabs, CRLF, runs, no-break and zero-width spaces), inline
 * elements, links whose text is or is not their URL, mailto and fragment links, images, line
 * breaks; and, mixed in, what the blockwise path must leave to html-to-text: tables, lists,
 * nested blocks, text and <br> directly in the body, stray close tags, conditional comments,
 * foreign content, documents without a body, cut short or with two.
 * The same seed gives the same corpus.
 */
import { seededRandom } from './dkim-corpus.js';

const WORDS = [
  'Hello', 'order', 'A-1042', 'has', 'shipped.', 'Lorem', 'ipsum', 'dolor', 'sit', 'amet,', 'consectetur', 'Zoë', '李小龍',
  '&amp;', '&nbsp;', '&lt;b&gt;', '&#x1F600;', '&copy;', '&bogus;', '&amp', 'a&b', '“quoted”', 'e\u0301', '-', '—', '...',
  'https://shop.example/very/long/path/that/keeps/going/and/going/past/the/seventy-eight/column/limit?x=1',
  'supercalifragilisticexpialidocious-supercalifragilisticexpialidocious-supercalifragilistic',
  '{{ name }}', 'x'.repeat(77), 'y'.repeat(78), 'z'.repeat(79), 'I', 'a',
];
const SPACES = [' ', ' ', ' ', '  ', '\n', '\r\n', '\t', ' \n  ', '&nbsp;', '\u00a0', '\u200b', ''];
const HREFS = [
  'https://shop.example/a?x=1&amp;y=2', 'https://shop.example/', 'mailto:help@shop.example', 'mailto:', '#top', '', 'https://u.example/{{ id }}', '/relative',
  'https://shop.example/?a=1&copy=2&amp', ' https://spaced.example/ ', 'HTTPS://SHOP.EXAMPLE/', 'https://shop.example/a b',
];
const INLINE = ['b', 'strong', 'i', 'em', 'span', 'u', 'font', 'small', 'code', 'sup', 'B', 'Span'];

/** The pieces documents are made of, drawn from one seeded random sequence. */
function pieces(random: () => number) {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => random() < p;

  const words = (max: number) => Array.from({ length: 1 + int(max) }, () => pick(WORDS) + pick(SPACES)).join('');
  const link = () => {
    const href = pick(HREFS);
    const text = pick([words(3), href.replace(/&amp;/g, '&'), 'https://shop.example/', '', `<img src="https://img.example/b.png" alt="Buy">`, `<b>${words(2)}</b>`, `${words(1)}<wbr>${words(1)}`]);
    const attribute = pick([`href="${href}"`, `href="${href}"`, `HREF='${href}'`, `href=${href.replace(/ /g, '') || '""'}`, `href = "${href}" href="https://second.example/"`, 'name="x"', 'href']);
    return `<a ${pick(['', 'title="a > b" '])}${attribute}${chance(0.3) ? ' style="color:#123"' : ''}>${text}</a>`;
  };
  const inline = (depth: number): string => {
    const r = random();
    if (r < 0.45) return words(12);
    if (r < 0.6) return link();
    if (r < 0.7) return pick(['<br>', '<br/>', '<BR />', '<wbr>', '</br>', '<wbr>' + 'w'.repeat(int(90))]);
    if (r < 0.76) return pick(['<img src="https://img.example/p.png" alt="Logo">', '<img src="x.png">', '<img alt="only alt">']);
    if (r < 0.8) return pick(['<!-- note -->', '<!-- <p>hidden</p> -->']);
    if (r < 0.83) return pick(['a < b', '5 > 3', '<3']);
    const tag = pick(INLINE);
    return `<${tag}${chance(0.3) ? ' class="x"' : ''}>${depth < 3 ? Array.from({ length: 1 + int(3) }, () => inline(depth + 1)).join('') : words(3)}</${tag}>`;
  };
  const leaf = () => {
    const tag = pick(['p', 'p', 'p', 'P', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'H1', 'div', 'div']);
    const attrs = pick(['', ' style="margin:0 0 16px"', " class='lead'", ' align=center', ' title="a > b"']);
    const content = Array.from({ length: int(6) }, () => inline(0)).join(pick(['', ' ', '\n']));
    return `<${tag}${attrs}>${content}</${tag}${pick(['', ' '])}>`;
  };
  /** Lists of inline items, closed or not, numbered from elsewhere, empty, with text loose in them. */
  const list = () => {
    const [open, close] = pick([
      ['ul', 'ul'], ['UL', 'ul'], ['ul type="square"', 'ul'], ['ol', 'ol'], ['ol start="7"', 'ol'], ['ol start="98"', 'ol'], ['ol start=-2', 'ol'],
      ['ol start="x"', 'ol'], ['ol type="1"', 'ol'], ['ol type="a"', 'ol'], ['ol type="I" start="3"', 'OL'],
    ]);
    const items = Array.from({ length: int(5) }, () =>
      chance(0.9)
        ? `<li${pick(['', ' style="margin:0"'])}>${Array.from({ length: int(3) }, () => inline(0)).join('')}${pick(['</li>', '</li>', ''])}`
        : pick([words(2), '<b>loose</b>', '<!-- c -->', '&nbsp;', '<b><li>an item in an inline element</b>']),
    );
    return `<${open}>${items.join(pick(['', '\n  ']))}</${close}>`;
  };
  return { random, int, pick, chance, words, link, inline, leaf, list };
}

/**
 * Leaf blocks alone (`<p>`, headings, inline `<div>`s) for the narrow leaf converter's
 * differential test (decision 0045), with what it must decline mixed in: links in links, a
 * close tag ending a link early, blocks and unknown elements inside, script and style.
 */
export function generateLeafBlocks(size: number, seed: number): string[] {
  const { random, int, pick, leaf, inline, words, list } = pieces(seededRandom(seed));
  const odd = () =>
    pick([
      `<p><a href="https://a.example/">${words(2)}<a href="https://b.example/">${words(2)}</a></a></p>`,
      `<h2><b><a href="https://a.example/">${words(2)}</b>${words(2)}</a></h2>`,
      `<p><i><a href="https://a.example/">${words(2)}</i>${words(2)}</p>`,
      `<div>${inline(0)}<script>document.write("<p>")</script>${inline(0)}<style>b{}</style></div>`,
      `<p>${inline(0)}<ul><li>x</li></ul></p>`,
      `<h1>straße ǆ ﬁ ${inline(0)}</h1>`,
      `<p>${words(4)}</span>${words(2)}</p>`,
      `<div>${inline(0)}<p>${words(2)}</p></div>`,
    ]);
  // Layout tables and centred divs of inline content: buttons, footers.
  const cells = () =>
    Array.from({ length: 1 + int(3) }, () => {
      const cell = pick(['td', 'td', 'th', 'TD']);
      return `<${cell}${pick(['', ' align="center"'])}>${Array.from({ length: int(3) }, () => inline(0)).join('')}${pick([`</${cell}>`, ''])}`;
    }).join('');
  const wrapped = () =>
    pick([
      () => {
        const group = pick(['', 'tbody', 'thead']);
        const rows = `<tr>${cells()}${pick(['</tr>', ''])}${pick(['', `<tr>${cells()}`])}`;
        return `<table role="presentation"${pick(['', ' class="data"'])}>${group ? `<${group}>${rows}${pick(['', `</${group}>`])}` : rows}</table>`;
      },
      // A link ended by its cell's close tag, or holding the next cell (no cell closes an open link).
      () => `<table><tr><td><a href="${pick(HREFS)}"><b>${words(2)}</td><td>${words(2)}</td></tr></table>`,
      () => `<table><tr><td><a href="${pick(HREFS)}">${words(2)}<td>${words(2)}</a></td></tr></table>`,
      () => `<div><center>${inline(0)}</center>${inline(0)}<td>${inline(0)}</div>`,
    ])();
  return Array.from({ length: size }, () => {
    const r = random();
    return r < 0.65 ? leaf() : r < 0.8 ? wrapped() : r < 0.93 ? list() : odd();
  });
}

export function generateEmailHtmlCorpus(size: number, seed: number): string[] {
  const { random, int, pick, chance, words, link, inline, leaf, list } = pieces(seededRandom(seed));
  /** Layout: divs and tables of blocks, tables of inline cells, centring wrappers, nested. */
  const container = (depth: number): string => {
    const children = () =>
      Array.from({ length: int(4) }, () => (depth < 2 && chance(0.3) ? container(depth + 1) : chance(0.1) ? list() : leaf())).join(pick(['', '\n', '\n    ']));
    const cells = () => Array.from({ length: 1 + int(3) }, () => `<td${pick(['', ' align="center"', ' style="padding:0"'])}>${children()}${pick(['</td>', '</TD>', ''])}`).join('');
    return pick([
      () => `<div${pick(['', ' class="wrap"'])}>${children()}</div>`,
      () => `<table role="presentation"${pick(['', ' width="100%"'])}>${pick(['', '<tbody>'])}<tr>${cells()}</tr>${pick(['', '<tr>' + cells()])}${pick(['', '</tbody>'])}</table>`,
      () => `<table><tr><td>${words(4)}</td><td>${link()}</td></tr><tr><th>${words(2)}</th></tr></table>`,
      () => `<center>${children()}</center>`,
      () => `<div>${Array.from({ length: 1 + int(3) }, () => inline(0)).join('')}</div>`,
    ])();
  };
  const uncovered = () =>
    pick([
      '<table><tr><td>text beside <p>a paragraph</p></td></tr></table>',
      '<div>text beside <p>a paragraph</p></div>',
      '<ul><li>one<ul><li>nested</li></ul></li></ul>',
      '<ol><li><p>a paragraph in an item</p></li></ol>',
      '<ul><li>x</li></ul></li>',
      '<table><tr><td><div>unclosed div</td></tr></table>',
      '<table><tr><td><div><td><p>a</p><td><p>b</p></td></td><p>c</p></div></td></tr></table>',
      '<div><span><p>block in inline</p></span></div>',
      '</td>',
      'stray text in the body',
      '<br>',
      '</p>',
      '<!--[if mso]><p>mso</p><![endif]-->',
      '<![if !mso]><p>not mso</p><![endif]>',
      '<svg><text>t</text></svg>',
      '<p>unclosed paragraph',
      '<p>para<div>block inside</div></p>',
      '<hr>',
      '<blockquote>q</blockquote>',
      '<pre>  pre  </pre>',
      '<!-- a --!> <p>after a bang-closed comment</p> -->',
      '<!--><p>after an empty comment</p>',
      '<!---><p>after an empty comment</p>',
      '<?php echo 1 ?>',
      '<title>in the body</title>',
      '< <p>after a lone "<"</p>',
      '<table class="data"><thead><tr><th>h</th></tr></thead></table>',
    ]);
  const bodyItem = () => {
    const r = random();
    if (r < 0.55) return leaf();
    if (r < 0.7) return container(0);
    if (r < 0.75) return list();
    if (r < 0.82) return pick(['<!-- spacer -->', '<script>var a = "<p>x</p>";</script>', '<style>p { color: red }</style>']);
    if (r < 0.97) return pick(SPACES.filter((s) => !s.includes('&') && !s.includes('\u00a0') && !s.includes('\u200b')));
    return uncovered();
  };

  const docs: string[] = [];
  for (let i = 0; i < size; i++) {
    // Most documents are covered; a few uncovered pieces show the fallback agrees too.
    const items = Array.from({ length: 1 + int(12) }, () => (chance(0.98) ? bodyItem() : uncovered()));
    const body = items.join(pick(['', '\n', '\r\n  ']));
    const head = pick([
      '',
      '<head><meta charset="utf-8"><title>Order <b>shipped</b></title><style>a { color: red } /* <body> */</style></head>',
      '<head><script>if (a < b) {}</script></head>',
      '<head><title>Re: the <body> tag</title></head>',
    ]);
    let doc = pick([
      `<!DOCTYPE html>\n<html>${head}<body style="margin:0">\n${body}\n</body></html>\n`,
      `<html>${head}<BODY>${body}</BODY></html>`,
      `<body>${body}</body>`,
      `<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "x.dtd"><?x <p>in a declaration</p> ?>` +
        `<html xmlns="http://www.w3.org/1999/xhtml">${head}<body>${body}</body></html>`,
      `<!-- preheader --><html><body>${body}</body>\n<p>after the body</p></html>`,
      body,
    ]);
    if (chance(0.03)) doc = doc.replace('<body', '<body><body');
    if (chance(0.05)) doc = doc.slice(0, int(doc.length + 1));
    docs.push(doc);
  }
  return docs;
}
