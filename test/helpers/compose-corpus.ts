/**
 * A seeded corpus of composeMessage inputs for the narrow MIME writer's differential test:
 * every shape Postline sends (text only, html only, text + html, either with one or more
 * attachments, attachments alone, and the ones the writer leaves to MailComposer), display
 * names and subjects in ASCII, 8-bit and emoji, long enough to fold or to be split into several
 * encoded words, custom headers (lower-case names, structured ones, long and empty values),
 * List-Unsubscribe, and bodies with long lines, trailing whitespace, dots at line starts,
 * CRLF/LF/CR mixes, control characters, mostly non-Latin text, empty parts and parts near
 * 64 KiB. Every input is valid: composeMessage accepts it. The same seed gives the same corpus.
 */
import type { ComposeInput } from '../../src/mail/compose.js';
import { seededRandom } from './dkim-corpus.js';

export interface CorpusInput {
  index: number;
  /** What the input exercises, counted by the test. */
  traits: string[];
  input: ComposeInput;
}

const ASCII_WORDS = ['hello', 'order', 'shipped', 'A-1042', 'Zoe', 'the', 'a', 'invoice', 'offer!', 'x=y', '50%', 'don\'t', 'e-mail', '#1', '(note)', 'a.b.c', '"quoted"', 'semi;colon', 'com,ma', 'back\\slash', '=?not?=', '=?UTF-8?Q?already_encoded?='];
const EIGHT_BIT = ['Grüße', 'café', 'Zoë', 'naïve', 'señor', 'Łukasz', 'Ωμέγα', 'Привет', '日本語', 'ठीक', 'straße', '€5', '\u00a0'];
const EMOJI = ['😀', '🎉', '✓', '🇫🇷', '👩‍👩‍👧', '𝒜'];
const BODY_PIECES = [' ', '  ', '\t', '\r\n', '\n', '\r', '\r\n\r\n', '=', '.', '..', '\n.\n', 'word', 'Lorem ipsum dolor sit amet,', '<p>', '</p>', '<a href="https://example.com/?a=1&b=2">link</a>', '&amp;', '=3D', '?', '_'];

export function generateComposeCorpus(count: number, seed: number): CorpusInput[] {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)];
  const chance = (p: number) => random() < p;
  const out: CorpusInput[] = [];

  for (let index = 0; index < count; index++) {
    const traits = new Set<string>();
    const trait = (t: string) => traits.add(t);

    const word = (): string => {
      const r = random();
      if (r < 0.15) return trait('8-bit words'), pick(EIGHT_BIT);
      if (r < 0.22) return trait('emoji'), pick(EMOJI);
      return pick(ASCII_WORDS);
    };
    const phrase = (maxWords: number): string => Array.from({ length: 1 + int(maxWords) }, word).join(chance(0.1) ? '\t' : ' ');

    const displayName = (): string | undefined => {
      const r = random();
      if (r < 0.2) return undefined;
      if (r < 0.25) return '';
      if (r < 0.3) return trait('long name'), phrase(30);
      if (r < 0.35) return trait('emoji name'), `${pick(EMOJI)} ${pick(ASCII_WORDS)}`;
      if (r < 0.45) return trait('8-bit name'), `${pick(EIGHT_BIT)} ${pick(EIGHT_BIT)}`;
      if (r < 0.5) return 'Plain Name 42';
      return phrase(4);
    };
    const address = (): string => {
      const r = random();
      if (r < 0.06) return trait('IDN domain'), `user${index}@bücher.example`;
      if (r < 0.1) return trait('8-bit local part'), `jörg${index}@example.net`;
      if (r < 0.14) return trait('upper-case domain'), `User.${index}@Example.COM`;
      if (r < 0.17) return trait('dots needing quotes'), `a..b${index}@example.org`;
      if (r < 0.2) return trait('atext specials'), `o'neil+tag=${index}&x@sub.example.org`;
      return `user${index}@example.net`;
    };
    const mailbox = () => {
      const name = displayName();
      if (name === undefined && chance(0.5)) return address();
      return { email: address(), ...(name === undefined ? {} : { name }) };
    };
    const mailboxes = () => {
      const n = 1 + int(chance(0.8) ? 1 : 4);
      if (n > 1) trait('several recipients');
      return n === 1 && chance(0.3) ? mailbox() : Array.from({ length: n }, mailbox);
    };

    const subject = (): string => {
      const r = random();
      if (r < 0.05) return trait('empty subject'), '';
      if (r < 0.08) return trait('whitespace subject'), '   ';
      if (r < 0.16) return trait('long ASCII subject (folded)'), Array.from({ length: 20 + int(60) }, () => pick(ASCII_WORDS)).join(' ');
      if (r < 0.2) return trait('subject token past 998 octets (prepared words)'), `Order ${'X'.repeat(1000 + int(800))} shipped`;
      if (r < 0.26) return trait('long 8-bit subject'), phrase(40);
      if (r < 0.3) return trait('subject with a tab'), `Hello\tthere ${word()}`;
      return phrase(8);
    };

    const body = (html: boolean): string => {
      const r = random();
      if (r < 0.04) return trait('empty body'), '';
      if (r < 0.12) return edgeBody();
      const parts: string[] = [];
      const size = r < 0.15 ? (trait('body near 64 KiB'), 60_000 + int(9000)) : r < 0.3 ? 4000 + int(8000) : int(1500);
      let length = 0;
      const nonLatin = chance(0.08);
      if (nonLatin) trait('mostly non-Latin body (base64)');
      while (length < size) {
        const q = random();
        let piece: string;
        if (nonLatin) piece = q < 0.7 ? pick(['日本語のテキスト', 'Привет мир ', 'ठीक है ']) : pick(BODY_PIECES);
        else if (q < 0.02) piece = (trait('line past 998 octets'), 'x'.repeat(999 + int(1500)));
        else if (q < 0.06) piece = (trait('line past 76'), pick(ASCII_WORDS).repeat(20 + int(30)));
        else if (q < 0.09) piece = (trait('trailing whitespace'), `${pick(ASCII_WORDS)}${pick([' ', '  ', '\t', ' \t'])}${pick(['\r\n', '\n', '\r'])}`);
        else if (q < 0.11) piece = (trait('dot at line start'), `\r\n.${pick(ASCII_WORDS)}`);
        else if (q < 0.12) piece = (trait('control characters'), pick(['\u0001', '\u007f', '\u000b', '\f', '\u0000']));
        else if (q < 0.2) piece = word();
        else if (q < 0.55) piece = pick(BODY_PIECES);
        else piece = `${pick(ASCII_WORDS)} `;
        parts.push(piece);
        length += piece.length;
      }
      if (chance(0.1)) {
        trait('body ending in whitespace');
        parts.push(pick([' ', '\t', '   ', ' \t ']));
      }
      const text = parts.join('');
      return html ? `<html><body>${text}</body></html>` : text;
    };

    // Short bodies at the edges of nodemailer's choice of transfer encoding: lines of 76 and 77
    // characters (7bit or not), as many Latin letters as other characters (quoted-printable or
    // base64), one control character, whitespace before the end.
    const edgeBody = (): string => {
      const line = (n: number) => 'abcdefghij'.repeat(8).slice(0, n);
      const breaks = ['\r\n', '\n', '\r'];
      const r = random();
      if (r < 0.4) {
        trait('line of 76 or 77 characters');
        return Array.from({ length: 1 + int(3) }, () => line(pick([75, 76, 77, 78]))).join(pick(breaks)) + (chance(0.5) ? pick(breaks) : '');
      }
      if (r < 0.7) {
        trait('as many Latin letters as other characters');
        const n = 1 + int(6);
        const other = pick(['é', '日', '😀', '\u0001', 'ß']);
        const units = other.length;
        return 'ab'.repeat(n * units).slice(0, n * units) + other.repeat(n) + pick(['', '1', ' ', '.', '\r\n']) + (chance(0.3) ? 'c' : '');
      }
      if (r < 0.78) return trait('no letters at all'), pick(['1234567890', '-- ** ==', '\t\t', '.']).repeat(1 + int(20));
      if (r < 0.85) return trait('one control character'), `${line(int(60))}${pick(['\u0000', '\u000b', '\u001f', '\u007f', '\t'])}${line(int(20))}`;
      return trait('whitespace at the end of the body'), `${line(int(90))}${pick([' ', '\t', ' \t', '\t ', '  \r\n '])}`;
    };

    const attachment = (i: number) => {
      const name = pick([
        'invoice.pdf', 'photo.png', 'notes.txt', 'data.csv', 'archive.tar.gz', 'no-extension', 'weird.unknownext',
        'Überweisung ✓.pdf', '日本語のファイル名.txt', 'a name with spaces.doc', 'quote"d.txt', '-leading-dash.txt',
        `${'long-file-name-'.repeat(8)}${i}.pdf`, 'tab\tname.txt', 'semi;colon.txt', '=?x?=.txt',
      ]);
      if (/[^\x00-\x7f]/.test(name)) trait('8-bit filename');
      const size = pick([0, 1, 2, 3, 57, 58, 100, 1000, 4000 + int(4000)]);
      const content = Buffer.from(Array.from({ length: size }, () => int(256)));
      const contentType = chance(0.03) ? 'message/rfc822' : chance(0.5) ? undefined : pick(['application/pdf', 'image/png', 'text/plain', 'text/csv', 'application/octet-stream', 'Application/X-Custom+json']);
      if (contentType === undefined) trait('attachment type from the filename');
      if (contentType === 'message/rfc822') trait('message/* attachment (left to MailComposer)');
      return { filename: name, content, ...(contentType ? { contentType } : {}) };
    };

    const customHeaders = (): Record<string, string> | undefined => {
      if (chance(0.4)) return undefined;
      const headers: Record<string, string> = {};
      const n = 1 + int(4);
      for (let i = 0; i < n; i++) {
        const name = pick(['X-Campaign', 'x-campaign-id', 'x-mime-test', 'mime-extra', 'X-SPF', 'x-fbl', 'Feedback-ID', 'In-Reply-To', 'References', 'X-Entity-Ref-ID', 'x-custom-md5', 'Precedence', 'X-Tag']);
        const r = random();
        let value: string;
        if (r < 0.1) value = (trait('empty header value'), pick(['', '  ']));
        else if (r < 0.2) value = (trait('8-bit header value'), phrase(6));
        else if (r < 0.28) value = (trait('long header value (folded)'), Array.from({ length: 30 + int(40) }, () => pick(ASCII_WORDS)).join(' '));
        else if (r < 0.3 && !/^(in-reply-to|references|feedback-id)$/i.test(name)) value = (trait('header token past 998 octets'), 'k'.repeat(1000 + int(200)));
        else if (/^(in-reply-to|references)$/i.test(name)) value = (trait('message-id header'), pick(['<a@b.test>', 'a@b.test', '<a@b.test> <c@d.test>', 'x@y.test z@w.test']));
        else value = phrase(3);
        headers[name] = value;
      }
      return headers;
    };

    // Shapes: which of text and html are given (undefined html-only derives the text part), attachments.
    const shape = random();
    let text: string | undefined;
    let html: string | undefined;
    if (shape < 0.25) [text, html] = [body(false), undefined];
    else if (shape < 0.45) [text, html] = [undefined, body(true)];
    else if (shape < 0.55) [text, html] = ['', body(true)];
    else if (shape < 0.97) [text, html] = [body(false), body(true)];
    else [text, html] = ['', chance(0.5) ? '' : undefined];
    if (text === '' && !html) trait('no text part');
    if (!text && !html) trait('no body at all (left to MailComposer)');
    const attachmentCount = chance(0.7) ? 0 : 1 + int(3);
    if (attachmentCount > 0) trait(`${attachmentCount} attachment(s)`);
    const cc = chance(0.2) ? mailboxes() : undefined;
    const replyTo = chance(0.2) ? mailboxes() : undefined;
    const headers = customHeaders();
    const listUnsubscribe = chance(0.6) ? { url: `https://t.example.com/u/${index}`, ...(chance(0.5) ? { mailto: `unsub+${index}@example.com` } : {}) } : undefined;
    const fromName = displayName();

    const input: ComposeInput = {
      from: { email: `news${index % 7}@example.com`, ...(fromName === undefined ? {} : { name: fromName }) },
      to: mailboxes(),
      ...(cc ? { cc } : {}),
      ...(replyTo ? { replyTo } : {}),
      subject: subject(),
      ...(html !== undefined ? { html } : {}),
      ...(text !== undefined ? { text } : {}),
      ...(headers ? { headers } : {}),
      ...(attachmentCount ? { attachments: Array.from({ length: attachmentCount }, (_, i) => attachment(i)) } : {}),
      messageId: chance(0.1) ? `<msg_${index}_${'m'.repeat(int(80))}@example.com>` : `msg_${index}@example.com`,
      date: new Date(Date.UTC(2026, 10, 1 + (index % 28), index % 24, index % 60, index % 60)),
      ...(listUnsubscribe ? { listUnsubscribe } : {}),
    };
    out.push({ index, traits: [...traits], input });
  }
  return out;
}
