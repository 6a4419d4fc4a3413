/**
 * A seeded corpus of per-recipient copies of templates, the messages a campaign or a
 * transactional template sends: many copies of one document that differ in a few places only
 * (a name, an order number, a tracked link, an unsubscribe URL), interleaved across templates.
 * The places are chosen where the narrow writer's shortcuts could go wrong: values of every
 * length, so that the soft line breaks after them move around the 76-column boundary; lines of
 * 70 to 80 characters; values that differ only in trailing whitespace (escaped before a line
 * break or at the end, held back by the stream encoder); '=' signs; 8-bit text and surrogate
 * pairs (quoted-printable or base64 instead of the simple path); TAB and CR (not simple text);
 * From and Reply-To with one address under several display names, string and prepared
 * subjects with the same text (the repeated header fields encoded once must tell them apart).
 * Every input is valid: composeMessage accepts it. The same seed gives the same corpus.
 */
import type { ComposeInput } from '../../src/mail/compose.js';
import { seededRandom } from './dkim-corpus.js';
import type { CorpusInput } from './compose-corpus.js';

const ASCII_NAMES = ['Zoe', 'Al', 'Maximilian-Alexander', 'Jo Ann', 'Ann=Marie', 'O\'Brien', 'x'.repeat(40), 'Sam ', 'Li'];
const OTHER_NAMES = ['Zoë', 'Łukasz', '日本', '😀 Sam', 'Tab\tName'];
const WHITESPACE = ['', ' ', '', '  ', '\t', ' \t'];
const LOREM = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.';

export function generateTemplateCopiesCorpus(count: number, seed: number, templates = 40): CorpusInput[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const chance = (p: number) => random() < p;

  /** A line of `length` characters, spaces at random places, maybe '=' or punctuation: a soft break lands differently on each. */
  const fixedLine = (length: number): string => {
    let s = '';
    while (s.length < length) s += chance(0.2) ? pick([' ', '=', '.', ',', '?', '!']) : pick(['a', 'b', 'word', 'xyz', 'Q']);
    return s.slice(0, length);
  };

  interface Template {
    /** Lines with {name}, {order}, {link}, {ws} placeholders. */
    lines: string[];
    /** One hard line (as HTML often is) or many. */
    oneLine: boolean;
    traits: string[];
    fromName: string;
    subject: string;
    headers: Record<string, string>;
    html: boolean;
    text: boolean;
  }

  const makeTemplate = (): Template => {
    const traits: string[] = [];
    const lines: string[] = [];
    const n = 3 + int(30);
    // Most templates are ASCII, the simple-text path; the others mix in 8-bit text, emoji, TAB, CR.
    const ascii = chance(0.8);
    for (let i = 0; i < n; i++) {
      let r = random();
      if (ascii && r >= 0.6 && r < 0.72) r = 0.8;
      if (r < 0.25) {
        lines.push(fixedLine(70 + int(11)));
        traits.push('line of 70-80 characters');
      } else if (r < 0.35) lines.push(`Hello {name},{ws}`);
      else if (r < 0.45) lines.push(`<p>Your order <b>{order}</b> has shipped. <a href="{link}">Track it</a>.</p>`);
      else if (r < 0.55) lines.push(`${fixedLine(60 + int(16))}{name}${fixedLine(int(20))}`);
      else if (r < 0.6) lines.push(`Total: {order}{ws}`);
      else if (r < 0.65) {
        lines.push(`Grüße aus Köln, {name} €`);
        traits.push('8-bit template');
      } else if (r < 0.68) {
        lines.push(`Party 🎉🎉 {name} 𝒜`);
        traits.push('surrogate pairs in template');
      } else if (r < 0.7) {
        lines.push(`col1\tcol2\t{order}`);
        traits.push('tab in template');
      } else if (r < 0.72) {
        lines.push(`old mac line\r{name}`);
        traits.push('CR in template');
      } else if (r < 0.75) lines.push('');
      else lines.push(LOREM.slice(0, 20 + int(LOREM.length - 20)) + (chance(0.3) ? '{ws}' : ''));
    }
    const html = chance(0.7);
    const text = !html || chance(0.6);
    return {
      lines,
      oneLine: chance(0.4),
      traits,
      fromName: pick(['Shop', 'Zoë\'s Shop', 'Shop', '']),
      subject: pick(['Your order {order} shipped', 'News for you', 'Grüße, {name}', `${'y'.repeat(1000)} long`, 'Sale 🎉']),
      headers: chance(0.5) ? { 'X-Campaign': pick(['autumn', 'spring sale', 'Frühling']) } : {},
      html,
      text,
    };
  };

  const all = Array.from({ length: templates }, makeTemplate);
  const out: CorpusInput[] = [];
  for (let index = 0; index < count; index++) {
    const template = all[int(all.length)];
    const traits = new Set<string>(template.traits);
    const name = chance(0.8) ? pick(ASCII_NAMES) : pick(OTHER_NAMES);
    const order = `A-${'9'.repeat(int(8))}${index}`;
    const link = `https://t.example.com/c/${index}?u=${'%2F'.repeat(int(12))}&s=${index.toString(16)}`;
    const ws = pick(WHITESPACE);
    if (ws) traits.add('trailing whitespace varies');
    const fill = (s: string) => s.replaceAll('{name}', name).replaceAll('{order}', order).replaceAll('{link}', link).replaceAll('{ws}', ws);
    const body = fill(template.lines.join(template.oneLine ? '' : '\n'));
    traits.add(template.oneLine ? 'one hard line' : 'many hard lines');
    if (/^[\n\x20-\x7e]*$/.test(body)) traits.add('simple text');
    if (/[\ud800-\udbff][\udc00-\udfff]/.test(body)) traits.add('surrogate pair');
    const subject = fill(template.subject);
    const input: ComposeInput = {
      from: { email: 'shop@example.com', ...(template.fromName ? { name: template.fromName } : {}) },
      to: { email: `user${index}@example.net`, name },
      subject,
      ...(template.html ? { html: body } : {}),
      ...(template.text ? { text: template.html ? `${body}\n\n--\nUnsubscribe: https://t.example.com/u/${index}\n` : body } : {}),
      headers: template.headers,
      ...(chance(0.3) ? { replyTo: { email: 'help@example.com', name: pick(['Help', 'Hilfe', '']) } } : {}),
      messageId: `msg_${index}@example.com`,
      date: new Date(Date.UTC(2026, 10, 27, 12, 0, index % 7)),
      listUnsubscribe: { url: `https://t.example.com/u/${index}` },
    };
    out.push({ index, traits: [...traits], input });
  }
  return out;
}
