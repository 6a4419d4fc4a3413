/**
 * bench/html: the CPU cost per document of the two HTML readings a tracked message with
 * distinct content needs (decision 0042), each against the library path it stands in for:
 * its link sites (narrow scanner vs htmlparser2) and its text part (blockwise vs html-to-text
 * on the whole document). Every copy is a new document, as with per-recipient variables: the
 * link sites and whole-document caches never hit, the blockwise path's per-block cache does
 * for the blocks copies share. In this process, CPU time (user + system) per document.
 *
 *   npm run bench:html [-- --documents 3000 --rounds 3]
 */
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { narrowLinkSites } from '../src/mail/link-sites/narrow.js';
import { parsedLinkSites } from '../src/mail/link-sites/parsed.js';
import { htmlToText } from '../src/mail/html-text/index.js';
import { convertHtml } from '../src/mail/html-text/convert.js';
import { blockwiseText } from '../src/mail/html-text/blocks.js';

const { values } = parseArgs({ options: { documents: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } } });
const total = Number(values.documents);
const rounds = Number(values.rounds);

const LOREM = '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>';
const shapes: Record<string, (i: number) => string> = {
  // bench/build.ts's message: a heading and a paragraph with the recipient's values, 28 shared paragraphs.
  order: (i) =>
    `<html><body><h1>Hello User ${i}</h1><p>Your order <b>A-${i}</b> has shipped. <a href="https://bench.test/track?o=A-${i}">Track it</a> or ` +
    `<a href="https://bench.test/help">get help</a>.</p>${LOREM.repeat(28)}</body></html>`,
  // A layout-table newsletter: nested tables, a merge field in the greeting.
  newsletter: (i) =>
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>News</title><style>td{font:14px sans-serif}</style></head>' +
    '<body style="margin:0"><center><table role="presentation" width="100%"><tr><td align="center"><table width="600">' +
    `<tr><td><h1>This month, user${i}@example.net</h1></td></tr>` +
    `<tr><td>${LOREM.repeat(6)}<p><a href="https://bench.test/news?u=${i}">Read the news</a></p></td></tr>` +
    `<tr><td><table><tr><td><p>Pricing: <a href="https://bench.test/pricing">see the plans</a></p></td></tr></table></td></tr>` +
    '</table></td></tr></table></center></body></html>',
  // A receipt: the recipient's items in a list, a button table with their link, shared terms.
  receipt: (i) =>
    `<html><body><h2>Receipt R-${i}</h2><p>Thanks for your order, customer ${i}.</p>` +
    `<ul><li>${1 + (i % 3)} × Mug</li><li>Teapot</li><li>Shipping: ${i % 2 ? 'express' : 'standard'}</li></ul>` +
    `<table role="presentation"><tr><td align="center"><a href="https://bench.test/orders/${i}">View your order</a></td></tr></table>` +
    `${LOREM.repeat(8)}</body></html>`,
};

function cpuPerDocument(docs: string[], f: (html: string) => unknown): number {
  const start = process.cpuUsage();
  for (const html of docs) f(html);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / docs.length;
}

const variants: [string, (html: string) => unknown][] = [
  ['link sites, htmlparser2', parsedLinkSites],
  ['link sites, narrow', narrowLinkSites],
  ['text part, html-to-text whole', convertHtml],
  ['text part, blockwise', htmlToText],
];
process.stdout.write(`${total} distinct documents per shape and round, ${rounds} rounds, node ${process.version}, load ${loadavg()[0].toFixed(1)}\n`);
let serial = 0;
for (const [shape, make] of Object.entries(shapes)) {
  const kb = (make(0).length / 1024).toFixed(1);
  const figures = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, f] of variants) {
      const docs = Array.from({ length: total }, () => make(serial++));
      for (const html of docs.slice(0, 100)) f(html); // warm-up on this round's first copies
      figures.get(name)!.push(cpuPerDocument(docs, f));
    }
  }
  const covered = `narrow scanner ${narrowLinkSites(make(0)) ? 'covers it' : 'declines it'}, blockwise ${blockwiseText(make(0), (leaves) => leaves.map(() => '')) !== null ? 'covers it' : 'declines it'}`;
  process.stdout.write(`${shape} (${kb} KB; ${covered})\n`);
  for (const [name, runs] of figures) {
    const sorted = [...runs].sort((a, b) => a - b);
    process.stdout.write(`  ${name.padEnd(30)} µs CPU per document ${runs.map((r) => r.toFixed(1)).join(' / ')} (median ${sorted[Math.floor(sorted.length / 2)].toFixed(1)})\n`);
  }
}
process.stdout.write(`load after ${loadavg()[0].toFixed(1)}\n`);
