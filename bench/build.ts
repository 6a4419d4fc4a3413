/**
 * bench/build: the CPU cost of the delivery engine's build step alone (render-free: tracking
 * rewrite, text part, MIME composition, RSA-2048 + Ed25519 DKIM), in this process, no
 * database and no SMTP. It reports process CPU time per message (user + system), which a busy
 * shared machine inflates far less than wall-clock throughput, so levers can be compared on it.
 *
 * --campaign builds campaign messages as the engine does: no content in the row, the campaign's
 * one copy (bench/campaign's ~4 KB HTML with three merge fields) rendered per recipient by
 * CampaignRenderer, with the bulk-mail headers, before the same build.
 *
 * --order-mail builds the message bench:delivery and bench:accept send: bench/lib/order-mail.ts's
 * template and subject rendered with each recipient's name and order, as the API renders them
 * at accept time (the row reaches the worker rendered).
 *
 * The last line is the two signatures alone (node:crypto's sign over a header block of the same
 * size, same keys), measured in this process after the builds: what the build costs besides
 * them is the difference.
 *
 *   npx tsx bench/build.ts [--messages 2000] [--same-content] [--campaign] [--order-mail]
 */
import { parseArgs } from 'node:util';
import { generateDkimKeyPair } from '../src/mail/dkim.js';
import { buildMessage } from '../src/domain/sending/message-build.js';
import { TrackingLinks } from '../src/domain/tracking/links.js';
import type { MessageRow } from '../src/db/queries/messages.js';
import { CampaignRenderer } from '../src/domain/campaigns/content.js';
import type { Queryable } from '../src/db/pool.js';
import { compileTemplate, renderTemplate } from '../src/templates/index.js';
import { createHash, createPrivateKey, createSecretKey, sign } from 'node:crypto';
import { ORDER_HTML } from './lib/order-mail.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    'same-content': { type: 'boolean', default: false },
    campaign: { type: 'boolean', default: false },
    'order-mail': { type: 'boolean', default: false },
  },
});
const total = Number(values.messages);
const [rsa, ed] = await Promise.all([generateDkimKeyPair('rsa'), generateDkimKeyPair('ed25519')]);
const signing = {
  domain: 'bench.test',
  trackingHost: null,
  keys: [
    { algorithm: 'rsa' as const, selector: 'r1', privateKeyPem: rsa.privateKeyPem },
    { algorithm: 'ed25519' as const, selector: 'e1', privateKeyPem: ed.privateKeyPem },
  ],
};
const links = new TrackingLinks({ secret: 'bench-secret-0123456789abcdef', baseUrl: 'https://postline.bench' });
const html = (i: number) =>
  `<html><body><h1>Hello ${values['same-content'] ? 'friend' : `User ${i}`}</h1>` +
  `<p>Your order <b>A-${values['same-content'] ? 1 : i}</b> has shipped. <a href="https://bench.test/track?o=A-${values['same-content'] ? 1 : i}">Track it</a> or <a href="https://bench.test/help">get help</a>.</p>` +
  '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(28) +
  '</body></html>';
const row = (i: number): MessageRow => ({
  id: `msg_${i.toString(16).padStart(32, '0')}`, account_id: 'acc_1', domain_id: 'dom_1', status: 'sending',
  from_email: 'shop@bench.test', from_name: 'Shop', to_email: `user${i}@example.net`, to_domain: 'example.net',
  cc: [], bcc: [], reply_to: null, subject: `Order A-${i} shipped`, html: html(i), text: null, headers: {}, attachments: [],
  tags: [], template_id: null, campaign_id: null, attempts: 1, next_attempt_at: new Date(), first_attempt_at: null,
  last_response: null, last_mx: null, locked_by: 'w', scheduled_at: null, delivered_at: null, created_at: new Date(),
});
const campaignHtml =
  '<html><body><h1>Hello {{ subscriber.name | there }}</h1>' +
  '<p>This month for {{ subscriber.email }} on the {{ subscriber.attributes.plan | free }} plan: <a href="https://bench.test/news">read the news</a> or <a href="https://bench.test/pricing">see pricing</a>.</p>' +
  '<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>'.repeat(28) +
  '</body></html>';
// The campaign's row, as selectCampaignContent reads it once per process.
const contentDb = { query: async () => ({ rows: [{ id: 'cmp_1', account_id: 'acc_1', html: campaignHtml, text: null, variables: {}, headers: {} }] }) } as unknown as Queryable;
const renderer = new CampaignRenderer(contentDb, links);
const campaignRow = (i: number): MessageRow => ({
  ...row(i), html: null, subject: `News for User ${i}`, campaign_id: 'cmp_1',
  merge_data: { subscriber: { id: `sub_${i}`, email: `user${i}@example.net`, name: `User ${i}`, attributes: { plan: i % 3 === 0 ? 'pro' : null } } },
});
// bench:delivery's send: the order template and subject rendered per recipient, as at accept.
const orderHtml = compileTemplate(ORDER_HTML);
const orderSubject = compileTemplate('Order {{ order }} shipped');
const orderRow = (i: number): MessageRow => {
  const variables = values['same-content'] ? { name: 'friend', order: 'A-1' } : { name: `User ${i}`, order: `A-${i}` };
  return { ...row(i), subject: renderTemplate(orderSubject, variables, 'subject'), html: renderTemplate(orderHtml, variables, 'html') };
};
const opts = { bounceDomain: 'bounces.bench.test', verpKey: createSecretKey(Buffer.alloc(32, 7)), now: new Date() };
const build = async (r: MessageRow) => buildMessage(values.campaign ? await renderer.render(r, signing.domain, signing.trackingHost) : r, signing, links, opts);
const make = values.campaign ? campaignRow : values['order-mail'] ? orderRow : row;
for (let i = 0; i < 200; i++) await build(make(i)); // warm-up
const rows = Array.from({ length: total }, (_, i) => make(i + 1000));
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
let bytes = 0;
for (const r of rows) bytes += (await build(r)).raw.length;
const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
const cpu = process.cpuUsage(cpu0);
const cpuUsPerMsg = (cpu.user + cpu.system) / total;

// The two signatures alone: RSA-2048 (PKCS#1 v1.5, SHA-256) over a header hash input of the
// size the builds signed, Ed25519 over its SHA-256, with the same keys.
const sample = (await build(make(0))).raw.toString('latin1');
const headerBlock = Buffer.from(sample.slice(0, sample.indexOf('\r\n\r\n')).replace(/^DKIM-Signature:.*(\r\n[ \t].*)*\r\n/gm, ''), 'latin1');
const rsaKey = createPrivateKey(rsa.privateKeyPem);
const edKey = createPrivateKey(ed.privateKeyPem);
for (let i = 0; i < 200; i++) sign('sha256', headerBlock, rsaKey);
const sig0 = process.cpuUsage();
for (let i = 0; i < total; i++) {
  sign('sha256', headerBlock, rsaKey);
  sign(null, createHash('sha256').update(headerBlock).digest(), edKey);
}
const sigCpu = process.cpuUsage(sig0);
const sigUsPerMsg = (sigCpu.user + sigCpu.system) / total;
process.stdout.write(
  `${total} builds${values['same-content'] ? ' (same content)' : ''}${values.campaign ? ' (campaign messages, rendered per recipient)' : ''}${values['order-mail'] ? " (bench:delivery's order mail)" : ''}, ~${Math.round(bytes / total / 1024)} KB each, node ${process.version}\n` +
  `cpu per message  ${cpuUsPerMsg.toFixed(0)} µs  → ${(1e6 / cpuUsPerMsg).toFixed(0)} builds/s per core\n` +
  `wall             ${(total / (wallMs / 1000)).toFixed(0)} builds/s (machine load ${(await import('node:os')).loadavg()[0].toFixed(1)})\n` +
  `signatures alone ${sigUsPerMsg.toFixed(0)} µs (RSA-2048 + Ed25519 over ${headerBlock.length} bytes) → everything else ${(cpuUsPerMsg - sigUsPerMsg).toFixed(0)} µs per message\n`,
);
