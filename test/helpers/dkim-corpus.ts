/**
 * A seeded corpus of messages for the DKIM signer's differential test: every header case the
 * signer reads (mixed-case and repeated names, names not signed, folding with tabs and spaces,
 * whitespace before the colon, 8-bit UTF-8 and RFC 2047 encoded words, very long lines, names
 * without a value) and every body case (empty, only CRLFs, trailing whitespace, trailing empty
 * lines, lone LF and lone CR, no final line break, bodies past mailauth's 64 KiB write chunk).
 * The same seed gives the same corpus, so a failure names a message that can be rebuilt.
 */

export interface CorpusMessage {
  index: number;
  /** What the message exercises, for the failure message. */
  traits: string[];
  raw: Buffer;
  /**
   * What a conforming writer sends: CRLF line breaks only, no lone CR, lines of at most 998
   * octets, no obsolete whitespace before a colon, no header byte that only mailauth reads as
   * whitespace (0xA0, VT, FF), no space ending a last line that has no line break. The
   * independent verifiers judge these; mailauth's readings of the rest are its own
   * (docs/decisions/0038-dkim-narrow-signer.md).
   */
  wellFormed: boolean;
}

/** mulberry32: a small, fast, seedable generator (test data only, not for secrets). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SIGNED = ['From', 'To', 'Cc', 'Subject', 'Date', 'Message-ID', 'MIME-Version', 'Content-Type', 'Reply-To', 'List-Unsubscribe', 'List-Unsubscribe-Post'];
const UNSIGNED = ['X-Mailer', 'Received', 'Return-Path', 'Sender', 'Content-Transfer-Encoding', 'X-Campaign', 'Precedence', 'In-Reply-To'];
const WORDS = ['hello', 'world', 'newsletter', 'invoice', 'a', 'Z', '42', 'offer!', '<id@x.test>', '"quoted, name"', 'alice@example.org', '(comment)', 'x=y;', 'b=c'];
const UTF8 = ['café', 'voilà', 'Grüße', 'naïve', '日本語', '😀', 'Ωμέγα', 'señor', 'Ä Ö Ü', 'ठीक', '\u00a0nbsp\u00a0'];
const ENCODED = ['=?UTF-8?B?Q2Fmw6k=?=', '=?UTF-8?Q?voil=C3=A0?=', '=?iso-8859-1?q?Gr=FC=DFe?=', '=?UTF-8?B?8J+YgA==?= =?UTF-8?Q?_and_more?='];
const WSP = [' ', '  ', '\t', ' \t ', '\t\t'];

export function generateCorpus(count: number, seed: number): CorpusMessage[] {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const chance = (p: number) => random() < p;
  const out: CorpusMessage[] = [];

  for (let index = 0; index < count; index++) {
    const traits = new Set<string>();
    let wellFormed = true;

    const word = (): string => {
      const r = random();
      if (r < 0.12) {
        traits.add('8-bit header');
        const w = pick(UTF8);
        if (Buffer.from(w, 'utf8').includes(0xa0)) wellFormed = false;
        return w;
      }
      if (r < 0.2) {
        traits.add('encoded word');
        return pick(ENCODED);
      }
      return pick(WORDS);
    };
    const value = (): string => {
      if (chance(0.05)) {
        traits.add('empty value');
        return chance(0.5) ? '' : pick(WSP);
      }
      if (chance(0.04)) {
        traits.add('very long header line');
        return Array.from({ length: 150 + Math.floor(random() * 200) }, word).join(' ');
      }
      const parts: string[] = [];
      const n = 1 + Math.floor(random() * 8);
      for (let i = 0; i < n; i++) {
        parts.push(word());
        if (i < n - 1) {
          if (chance(0.12)) {
            traits.add('folded header');
            parts.push(`\r\n${pick(WSP)}`);
          } else if (chance(0.005)) {
            // VT and FF are not WSP to RFC 5322, but mailauth reads them as whitespace.
            traits.add('line starting with VT or FF');
            wellFormed = false;
            parts.push(`\r\n${pick(['\v', '\f'])}`);
          } else parts.push(chance(0.85) ? ' ' : pick(WSP));
        }
      }
      let v = parts.join('');
      if (chance(0.08)) {
        traits.add('header trailing whitespace');
        v += pick(WSP);
      }
      return v;
    };
    const casedName = (name: string): string => {
      const r = random();
      if (r < 0.7) return name;
      traits.add('mixed-case name');
      if (r < 0.8) return name.toLowerCase();
      if (r < 0.9) return name.toUpperCase();
      return [...name].map((c) => (chance(0.5) ? c.toUpperCase() : c.toLowerCase())).join('');
    };
    const field = (name: string): string => {
      let colon = ':';
      if (chance(0.02)) {
        traits.add('whitespace before colon');
        wellFormed = false;
        colon = `${pick([' ', '\t', '  '])}:`;
      }
      const v = value();
      const sep = chance(0.9) ? ' ' : chance(0.5) ? '' : pick(WSP);
      return `${casedName(name)}${colon}${sep}${v}`;
    };

    const fields: string[] = [];
    // A few messages sign little or nothing, to reach h= edge cases.
    const signedShare = index % 97 === 5 ? 0 : 0.6;
    if (index % 211 === 7) traits.add('no signed header');
    else {
      // The author field carries an address, so a verifier that needs the From domain can judge.
      const from = field('From');
      fields.push(/@/.test(from) ? from : `${from} <sender@example.test>`);
    }
    if (signedShare === 0) traits.add('few signed headers');
    for (const name of SIGNED.slice(1)) if (chance(signedShare)) fields.push(field(name));
    for (const name of UNSIGNED) {
      if (chance(0.3)) {
        traits.add('unsigned header');
        fields.push(field(name));
      }
    }
    if (chance(0.25)) {
      traits.add('repeated header');
      const times = 1 + Math.floor(random() * 3);
      for (let i = 0; i < times; i++) fields.push(field(pick(['Subject', 'To', 'From', 'Cc', 'Received', 'Content-Type'])));
    }
    // Shuffle: the signer reads the fields where they are, bottom-up.
    for (let i = fields.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [fields[i], fields[j]] = [fields[j], fields[i]];
    }

    const body = generateBody(random, pick, chance, traits);
    let text = `${fields.join('\r\n')}\r\n\r\n${body.text}`;
    if (!body.wellFormed) wellFormed = false;

    // Line-break variants over the whole message.
    const variant = random();
    if (variant < 0.06) {
      traits.add('lone LF everywhere');
      text = text.replace(/\r\n/g, '\n');
      wellFormed = false;
    } else if (variant < 0.12) {
      traits.add('some lone LF');
      text = text.replace(/\r\n/g, (m) => (chance(0.3) ? '\n' : m));
      wellFormed = false;
    } else if (variant < 0.14) {
      traits.add('lone CR in a header');
      text = text.replace(/\r\n/, (m) => ` a\rb${m}`);
      wellFormed = false;
    }
    if (text.split(/\r?\n/).some((line) => Buffer.byteLength(line) > 998)) wellFormed = false;
    if (traits.has('no final line break') && / $/.test(text)) wellFormed = false;
    out.push({ index, traits: [...traits], raw: Buffer.from(text, 'utf8'), wellFormed });
  }
  return out;
}

function generateBody(
  random: () => number,
  pick: <T>(items: readonly T[]) => T,
  chance: (p: number) => boolean,
  traits: Set<string>,
): { text: string; wellFormed: boolean } {
  const kind = random();
  if (kind < 0.06) {
    traits.add('empty body');
    return { text: '', wellFormed: true };
  }
  if (kind < 0.12) {
    traits.add('body of only CRLFs');
    return { text: '\r\n'.repeat(1 + Math.floor(random() * 5)), wellFormed: true };
  }
  if (kind < 0.15) {
    traits.add('body of whitespace lines');
    return { text: Array.from({ length: 1 + Math.floor(random() * 4) }, () => `${pick(WSP)}\r\n`).join(''), wellFormed: true };
  }
  let wellFormed = true;
  const long = kind > 0.97;
  if (long) traits.add('long body (past 64 KiB)');
  const lines: string[] = [];
  const loneCrs = chance(0.15);
  const target = long ? 66_000 + Math.floor(random() * 70_000) : Math.floor(random() * 3000);
  let size = 0;
  while (size < target) {
    let line = '';
    const r = random();
    if (r < 0.1) line = '';
    else if (r < 0.15) {
      traits.add('whitespace-only line');
      line = pick(WSP);
    } else {
      const n = 1 + Math.floor(random() * 14);
      const parts: string[] = [];
      if (chance(0.08)) {
        traits.add('leading whitespace');
        parts.push(pick(WSP));
      }
      for (let i = 0; i < n; i++) {
        parts.push(chance(0.05) ? pick(UTF8) : pick(WORDS));
        if (i < n - 1) parts.push(chance(0.85) ? ' ' : pick(WSP));
      }
      if (chance(0.12)) {
        traits.add('trailing whitespace');
        parts.push(pick(WSP));
      }
      if (!long && chance(0.01)) {
        traits.add('very long body line');
        parts.push('x'.repeat(1000 + Math.floor(random() * 2000)));
      }
      line = parts.join('');
    }
    if (loneCrs && chance(0.05)) {
      traits.add('lone CR in body');
      line = line.replace(/ /, pick([' \r', '\r ', '\r\r', ' \r ']));
      wellFormed = false;
    }
    lines.push(line);
    size += line.length + 2;
  }
  let text = lines.join('\r\n');
  const end = random();
  if (end < 0.15) {
    traits.add('no final line break');
    if (chance(0.3)) text += pick(WSP);
  } else if (end < 0.35) {
    traits.add('trailing empty lines');
    text += '\r\n'.repeat(2 + Math.floor(random() * 4));
  } else if (end < 0.4) {
    traits.add('trailing whitespace lines');
    text += `\r\n${pick(WSP)}\r\n${pick(WSP)}\r\n`;
  } else text += '\r\n';
  return { text, wellFormed };
}
