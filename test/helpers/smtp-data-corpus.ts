/**
 * A seeded corpus of message bytes for the SMTP DATA differential test
 * (test/mail/smtp-data-differential.test.ts): messages as Postline builds them (the narrow MIME
 * writer's output for the compose corpus), built-like CRLF messages with dots at line starts,
 * lines of a lone dot, 8-bit bytes and with or without a final CRLF, the same with bare LF and
 * bare CR sprinkled in, and short dense strings over {CR, LF, '.', 'a', 0xff} that reach every
 * edge (empty, a lone CR at the end, `\r.`, `\n.`, `\r\r\n`, ...). Each input also carries the
 * points where the reference stream is fed in separate chunks. The same seed gives the same corpus.
 */
import { composeNarrow } from '../../src/mail/compose.js';
import { generateComposeCorpus } from './compose-corpus.js';
import { seededRandom } from './dkim-corpus.js';

export interface DataCase {
  index: number;
  traits: string[];
  raw: Buffer;
  /** Offsets where the reference DataStream gets a new chunk (sorted, within the message). */
  splits: number[];
}

const LINES = ['Lorem ipsum dolor sit amet, consectetur adipiscing elit.', 'Grüße aus Köln — 日本語', '', '.', '..', '.hidden', '. leading dot and space', 'trailing space ', '\ttab', 'a.b.c', '=2E', 'x'.repeat(998)];
const DENSE = [0x0d, 0x0a, 0x2e, 0x61, 0xff];

export function generateDataCorpus(count: number, seed: number): DataCase[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const chance = (p: number) => random() < p;
  const composed = generateComposeCorpus(Math.ceil(count / 8), seed ^ 0x44);
  const out: DataCase[] = [];

  for (let index = 0; index < count; index++) {
    const traits = new Set<string>();
    const trait = (t: string) => traits.add(t);
    let raw: Buffer | null = null;
    const kind = index % 8;

    if (kind === 0) {
      const { input } = composed[index / 8];
      raw = composeNarrow(input, (index * 2654435761 >>> 0).toString(16).padStart(16, 'c'));
      if (raw) trait('built by the MIME writer');
    }
    if (raw === null && kind <= 4) {
      const lines = ['From: shop@example.com', 'To: zoe@example.org', 'Subject: Order', ''];
      const bodyLines = chance(0.05) ? 600 + int(400) : int(40);
      for (let i = 0; i < bodyLines; i++) {
        const line = pick(LINES);
        if (line.startsWith('.')) trait('dot at line start');
        if (line === '.') trait('a line of a lone dot');
        lines.push(line);
      }
      if (chance(0.2)) {
        lines.push(String.fromCharCode(...Array.from({ length: 1 + int(60) }, () => 0x80 + int(128))));
        trait('raw 8-bit bytes');
      }
      let text = lines.join('\r\n');
      if (chance(0.6)) text += '\r\n';
      else trait('no final CRLF');
      raw = Buffer.from(text, 'latin1');
      if (bodyLines >= 600) trait('long message');
    } else if (raw === null && kind <= 6) {
      // Built-like, with bare line ends where a careless template would put them.
      let text = Array.from({ length: 1 + int(30) }, () => pick(LINES)).join(pick(['\r\n', '\n', '\r']));
      const spots = 1 + int(6);
      for (let s = 0; s < spots; s++) {
        const at = int(text.length + 1);
        const bit = pick(['\n', '\r', '\r\r\n', '\n\r', '\r.', '\n.', '\r\n.', '\n\n', '\r\r']);
        text = text.slice(0, at) + bit + text.slice(at);
      }
      if (text.includes('\n') && /(^|[^\r])\n/.test(text)) trait('bare LF');
      if (/\r(?!\n)/.test(text)) trait('bare CR');
      if (/\r(?!\n)\./.test(text)) trait('dot after a bare CR');
      if (text.endsWith('\r')) trait('ends with a bare CR');
      if (text.endsWith('\n') && !text.endsWith('\r\n')) trait('ends with a bare LF');
      raw = Buffer.from(text, 'utf8');
    } else if (raw === null) {
      raw = Buffer.from(Array.from({ length: int(12) }, () => pick(DENSE)));
      trait('dense edge string');
      if (raw.length === 0) trait('empty message');
    }
    if (raw.length > 0 && raw[0] === 0x2e) trait('dot as the first byte');
    if (raw.length > 0 && raw[raw.length - 1] === 0x0d) trait('ends with CR');

    const splits: number[] = [];
    if (raw.length > 1 && chance(0.7)) {
      for (let s = 1 + int(4); s > 0; s--) splits.push(1 + int(raw.length - 1));
      // Prefer the awkward places: between CR and LF, before a dot.
      const cr = raw.indexOf('\r\n');
      if (cr !== -1 && chance(0.5)) {
        splits.push(cr + 1);
        trait('chunk split inside CRLF');
      }
      const dot = raw.indexOf('\n.');
      if (dot !== -1 && chance(0.5)) {
        splits.push(dot + 1);
        trait('chunk split before a dot');
      }
      trait('fed in chunks');
    }
    out.push({ index, traits: [...traits], raw, splits: [...new Set(splits)].sort((a, b) => a - b) });
  }
  return out;
}
