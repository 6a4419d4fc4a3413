/**
 * bench/compose: the CPU cost of composing one message (composeMessage's MIME writing, after
 * validation and with the text part given), the narrow writer (src/mail/mime/, decision 0041)
 * against MailComposer + the one-pass walk it replaced, in alternated rounds in this process.
 * The messages are bench/build's: ~4 KB of HTML with tracked links and its derived text part,
 * distinct per recipient; `--attachment` adds a 20 KB PDF (multipart/mixed). `--copies` makes
 * them a campaign's per-recipient copies: one subject and Reply-To for all, only the name,
 * the tracked links and the unsubscribe URLs differ.
 *
 *   npx tsx bench/compose.ts [--messages 3000] [--rounds 3] [--attachment] [--copies]
 */
import { parseArgs } from 'node:util';
import { loadavg } from 'node:os';
import { composeNarrow, composeWithLibrary, htmlToText, type ComposeInput } from '../src/mail/compose.js';

const { values } = parseArgs({
  options: { messages: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' }, attachment: { type: 'boolean', default: false }, copies: { type: 'boolean', default: false } },
});
const total = Number(values.messages);
const rounds = Number(values.rounds);

const html = (i: number) =>
  `<html><body><h1>Hello User ${i}</h1>` +
  `<p>Your order <b>A-${i}</b> has shipped. <a href="https://postline.bench/c/${i}?u=https%3A%2F%2Fbench.test%2Ftrack%3Fo%3DA-${i}&amp;s=7f3a">Track it</a> or <a href="https://postline.bench/c/${i}?u=https%3A%2F%2Fbench.test%2Fhelp&amp;s=91bc">get help</a>.</p>` +
  '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(28) +
  `<img src="https://postline.bench/o/${i}" width="1" height="1" alt=""></body></html>`;
const pdf = Buffer.from(Array.from({ length: 20_000 }, (_, i) => (i * 131) % 256));
const input = (i: number): ComposeInput => ({
  from: { email: 'shop@bench.test', name: 'Shop' },
  to: `user${i}@example.net`,
  subject: values.copies ? 'Your autumn order news' : `Order A-${i} shipped`,
  ...(values.copies ? { replyTo: { email: 'help@bench.test', name: 'Shop help' } } : {}),
  html: html(i),
  text: `${htmlToText(html(i))}\n\n--\nUnsubscribe: https://postline.bench/u/${i}\n`,
  headers: { 'X-Campaign': 'autumn' },
  ...(values.attachment ? { attachments: [{ filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' }] } : {}),
  messageId: `msg_${i}@bench.test`,
  date: new Date(),
  listUnsubscribe: { url: `https://postline.bench/u/${i}`, mailto: `mailto:b-${i}@bounces.bench.test?subject=unsubscribe` },
});
const inputs = Array.from({ length: total }, (_, i) => input(i));
const base = '0123456789abcdef';

const variants: [string, (m: ComposeInput) => unknown][] = [
  ['MailComposer + one-pass walk (before)', (m) => composeWithLibrary(m, base)],
  ['narrow writer (after)', (m) => composeNarrow(m, base)],
];
for (const [, run] of variants) for (let i = 0; i < 300; i++) await run(inputs[i]); // warm-up

const results = variants.map(() => [] as number[]);
for (let r = 0; r < rounds; r++) {
  for (const [v, [, run]] of variants.entries()) {
    const cpu0 = process.cpuUsage();
    for (const m of inputs) await run(m);
    const cpu = process.cpuUsage(cpu0);
    results[v].push((cpu.user + cpu.system) / total);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const bytes = composeNarrow(inputs[0], base)!.length;
process.stdout.write(
  `composeMessage's MIME writing, ${total} ${values.copies ? 'per-recipient copies' : 'distinct messages'} of ~${Math.round(bytes / 1024)} KB${values.attachment ? ' (with a 20 KB attachment)' : ''}, ${rounds} alternated rounds, node ${process.version}\n` +
    variants.map(([name], v) => `  ${name.padEnd(40)} CPU µs per message ${results[v].map((x) => x.toFixed(0)).join(' / ')} (median ${median(results[v]).toFixed(0)})\n`).join('') +
    `  machine load ${loadavg()[0].toFixed(1)}\n`,
);
