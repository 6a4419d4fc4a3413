/**
 * `npm run bench:templates`: parse once, render per recipient. Builds a realistic ~20 KB HTML
 * campaign body with 30 merge fields (some with fallbacks) and a 50-item order loop, then
 * prints the parse time and renders/second in the html context.
 */
import { performance } from 'node:perf_hooks';
import { compileTemplate, renderTemplate, type TemplateVariables } from '../src/templates/index.js';

const FIELDS = 30;
const ITEMS = 50;
const RECIPIENTS = 1000;
const WARMUP = 2_000;
const RENDERS = Number(process.env.RENDERS ?? 20_000);

function buildSource(): string {
  const head = `<!doctype html><html><head><meta charset="utf-8"><title>{{ subject | "Your order" }}</title>
<style>body{font-family:Helvetica,Arial,sans-serif;color:#222}table.items td{padding:4px 8px;border-bottom:1px solid #eee}</style>
</head><body><table width="100%" cellpadding="0" cellspacing="0" role="presentation"><tr><td align="center">\n`;
  const paragraphs: string[] = [];
  for (let i = 0; i < FIELDS; i++) {
    const tag = i % 3 === 0 ? `{{ customer.field_${i} | "not provided" }}` : i % 3 === 1 ? `{{ field_${i} | there }}` : `{{ field_${i} }}`;
    paragraphs.push(
      `<p style="margin:0 0 12px 0;line-height:1.5">Paragraph ${i}: thanks for being with us. ` +
        `Here is something about ${tag} that matters to you, with a <a href="https://example.com/p/${i}?utm_source=postline">link</a>. ` +
        `Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ` +
        `Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. ` +
        `Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt mollit anim id est laborum. ` +
        `Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu fugiat nulla pariatur.</p>\n`,
    );
  }
  const loop = `<table class="items" role="presentation">
[for item in order.items]<tr><td>{{ loop.index }}</td><td><a href="https://shop.example.com/p/{{ item.sku }}">{{ item.name | "Unnamed item" }}</a></td>
<td>{{ item.qty | 1 }} &times;</td><td align="right">{{ item.price }} {{ order.currency | EUR }}</td><td>{{ item.note | "&nbsp;" }}</td></tr>
[/for]</table>\n`;
  const footer = `<p style="font-size:12px;color:#888">You receive this because you signed up at example.com.
<a href="{{ unsubscribe_url }}">Unsubscribe</a> · {{ company.name | "Example Ltd" }}, {{ company.address | "1 Main St" }}</p>
</td></tr></table></body></html>\n`;
  return head + paragraphs.slice(0, FIELDS / 2).join('') + loop + paragraphs.slice(FIELDS / 2).join('') + footer;
}

function buildRecipient(n: number): TemplateVariables {
  const vars: Record<string, unknown> = { customer: {} as Record<string, unknown>, unsubscribe_url: `https://example.com/u/${n}` };
  for (let i = 0; i < FIELDS; i++) {
    const value = n % 4 === 0 ? '' : `value ${i} for <recipient ${n}> & co`;
    if (i % 3 === 0) (vars.customer as Record<string, unknown>)[`field_${i}`] = value;
    else vars[`field_${i}`] = value;
  }
  const items = Array.from({ length: ITEMS }, (_, i) => ({
    sku: `SKU-${n}-${i}`,
    name: i % 7 === 0 ? null : `Product "${i}" <b>`,
    qty: i % 5 === 0 ? undefined : i + 1,
    price: (i * 3.5 + n / 100).toFixed(2),
  }));
  vars.order = { items, currency: n % 2 === 0 ? 'USD' : '' };
  return vars;
}

const source = buildSource();
const t0 = performance.now();
const template = compileTemplate(source);
const parseMs = performance.now() - t0;
const PARSES = 1_000;
const t2 = performance.now();
for (let i = 0; i < PARSES; i++) compileTemplate(source);
const warmParseMs = (performance.now() - t2) / PARSES;
const recipients = Array.from({ length: RECIPIENTS }, (_, n) => buildRecipient(n));

// byteLength reads the whole string, as the MIME encoder will: the figure includes materialising it.
let bytes = 0;
for (let i = 0; i < WARMUP; i++) bytes += Buffer.byteLength(renderTemplate(template, recipients[i % RECIPIENTS], 'html'));
const t1 = performance.now();
for (let i = 0; i < RENDERS; i++) bytes += Buffer.byteLength(renderTemplate(template, recipients[i % RECIPIENTS], 'html'));
const seconds = (performance.now() - t1) / 1000;

const sample = renderTemplate(template, recipients[1], 'html');
console.log(`template: ${(source.length / 1024).toFixed(1)} KB, ${FIELDS} merge fields, ${ITEMS}-item loop`);
console.log(`parse: ${parseMs.toFixed(2)} ms cold (first call), ${warmParseMs.toFixed(3)} ms warm (mean of ${PARSES})`);
console.log(`render: ${RENDERS} renders in ${seconds.toFixed(2)} s = ${Math.round(RENDERS / seconds).toLocaleString('en')} renders/s`);
console.log(`output: ~${(sample.length / 1024).toFixed(1)} KB per render (checksum ${bytes})`);
