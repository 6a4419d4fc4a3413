/**
 * Bounces written for humans: Exim's "Mail delivery failed", qmail's "failure notice",
 * Sendmail's "Returned mail", Gmail's older notices, DragonFly Mail Agent, Domino, Exchange
 * 2003, GroupWise, MDaemon, Kerio, Zoho, GMX… They differ in wording but share a shape: a
 * report section naming each failed address at a recognisable spot (alone on a line, after
 * "RCPT TO:", "delivering your mail to", "(…)"), followed by what the remote server said,
 * then the returned message. This module finds that section, the addresses in it, and the
 * lines that belong to each address; classification is ./classify.ts's job.
 */

export interface TextRecipient {
  email: string;
  /** The text that belongs to this address: from its first mention up to the next address. */
  chunk: string;
  /** The server's reply line(s) when the chunk has one ("550 5.1.1 …"), else the chunk's first lines. */
  diagnostic: string | null;
  remoteMta: string | null;
}

/** Where the returned message (or its headers) starts in the common formats. */
const RETURNED_MARKERS: RegExp[] = [
  /^[ \t]*-+ ?This is a copy of (?:the|your) message/im,
  /^[ \t]*-+ ?Below this line is a copy of the message/im,
  /^[ \t]*-+ ?(?:Original|Returned|Undelivered|Unsent) (?:message|mail)(?: header)?s?(?: follows| headers?)?/im,
  /^[ \t]*-+ ?(?:Message|Returned) (?:header|message|text)s? (?:follows|below)/im,
  /^[ \t]*-+ ?The header of the original message/im,
  /^[ \t]*Original message (?:headers|follows|header)/im,
  /^[ \t]*Possibly truncated original message follows/im,
  /^[ \t]*-+ ?(?:Original|Returned) Message -+/im,
  /^[ \t]*The original message (?:was|is) (?:attached|included|below)/im,
  /^[ \t]*-+ ?Headers? of (?:the )?(?:original|returned) message/im,
  /^[ \t]*-+ ?Forwarded message/im,
  /^[ \t]*\*+ ?Original message/im,
  /^[ \t]*-+ ?Received-Headers/im,
  /^[ \t]*Message details:/im,
];

/** The report section: the text before the returned message. */
export function reportSection(text: string): { report: string; returned: string } {
  let cut = text.length;
  for (const re of RETURNED_MARKERS) {
    const m = re.exec(text);
    if (m && m.index < cut && m.index > 0) cut = m.index;
  }
  return { report: text.slice(0, cut), returned: text.slice(cut) };
}

const ADDR = String.raw`[^\s<>()\[\]"',;:@]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+`;

/** Places in a bounce's report where the failed address stands, each capturing it. */
const RECIPIENT_SPOTS: RegExp[] = [
  // Alone on its line, maybe in <> or "", maybe with a trailing colon (Exim, qmail, GMX, Sendmail, Gmail).
  new RegExp(String.raw`^[ \t>*-]*[<"]?(${ADDR})[>"]?:?[ \t]*$`, 'gim'),
  // Leading its line, followed by the reason (Zoho, Yandex, Exchange 2003 "x on <date>", Orange).
  new RegExp(String.raw`^[ \t>*-]*[<"]?(${ADDR})[>"]?(?::|\s+(?:on|-|\(|\[|invalid|unknown|user|mailbox|host|for|failed|has|was|is|does|error)|\s*\.\.\.)`, 'gim'),
  // Named in a sentence or a transcript.
  new RegExp(String.raw`(?:RCPT TO|rcpt to|Recipient|Empfänger|Destinataire|Original-Recipient|Final-Recipient|X-Failed-Recipients|delivering (?:your )?(?:mail|message) to|deliver(?:ed|y)? (?:your )?(?:mail |message )?to|(?:message|mail|e-?mail) (?:to|for)|undeliverable to|not (?:be )?delivered to|couldn't be delivered to|wasn't delivered to|failed (?:for|to)|address(?:ee)?|to the following|user|mailbox|following recipient)s?:?(?: the following:)?\s*(?:rfc822;\s*)?[<"(\[]?(?<![\w.+-])(${ADDR})`, 'gi'),
  // In parentheses after a name (Domino, GroupWise).
  new RegExp(String.raw`\((${ADDR})\)`, 'gi'),
];

const MAX_HITS = 500;
const MAX_CHUNK = 20_000;

const NOT_A_RECIPIENT = /^(?:mailer[-_]?daemon|postmaster|mail[-_]?delivery[-_]?(?:system|subsystem)?|double-bounce|bounces?|bounces\+[^@]*|noreply|no-reply)@/i;

function lineStart(text: string, index: number): number {
  return text.lastIndexOf('\n', index - 1) + 1;
}

const REPLY_LINE = /(?:^|[\s:;(#<]|said:?)(?:[245]\d\d[ -](?:[245]\.\d{1,3}\.\d{1,3})?|#?[245]\.\d{1,3}\.\d{1,3}\b)/;

/** The server's answer in a chunk: the first line with a reply or status code and its continuation lines. */
function diagnosticOf(chunk: string, email: string): string | null {
  const lines = chunk.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (!REPLY_LINE.test(lines[i])) continue;
    const out = [lines[i].trim()];
    for (let j = i + 1; j < lines.length && out.length < 6; j++) {
      const next = lines[j];
      if (next.trim() === '' || REPLY_LINE.test(next) && /^\s*(?:<<<|>>>)/.test(next)) break;
      if (/^\s{2,}|^[245]\d\d[ -]/.test(next)) out.push(next.trim());
      else break;
    }
    return out.join(' ').replace(/\s+/g, ' ').slice(0, 1000);
  }
  // No code: the chunk's first words that are not the address itself.
  const words = lines.map((l) => l.trim()).filter((l) => l && l.replace(/[<>"':]/g, '').toLowerCase() !== email.toLowerCase());
  const text = words.slice(0, 4).join(' ').replace(/\s+/g, ' ').trim();
  return text ? text.slice(0, 1000) : null;
}

const REMOTE_MTA: RegExp[] = [
  /\bhost:?\s+([a-z0-9][a-z0-9.-]*\.[a-z]{2,})\.?\b/i,
  /while talking to ([a-z0-9][a-z0-9.-]*\.[a-z]{2,})\.?:/i,
  /^\s*([a-z0-9][a-z0-9.-]*\.[a-z]{2,})\.? \[[0-9a-f.:]+\] (?:did not like|said|does not like)/im,
  /\bby ([a-z0-9][a-z0-9.-]*\.[a-z]{2,})\.? \[[0-9a-f.:]+\]/i,
  /<([a-z0-9][a-z0-9.-]*\.[a-z]{2,}) #[245]\.\d/i,
  /\b((?:\d{1,3}\.){3}\d{1,3}) (?:does not like|failed after)/i,
  /remote (?:server|host|mta) \(?([a-z0-9][a-z0-9.-]*\.[a-z0-9]{2,})\)?/i,
  /Generating server:\s*([a-z0-9][a-z0-9.-]*\.[a-z]{2,})/i,
];

function remoteMtaOf(chunk: string): string | null {
  for (const re of REMOTE_MTA) {
    const m = re.exec(chunk);
    if (m) return m[1].toLowerCase();
  }
  return null;
}

/**
 * The failed addresses of a human-readable bounce, in order of first mention. `exclude`: the
 * addresses that are certainly not recipients (the bounce's own To, the original's From).
 * `known`: addresses a header already names (X-Failed-Recipients): when given, only they
 * are taken, and the text supplies their diagnostics.
 */
export function readTextRecipients(report: string, opts: { exclude: string[]; known: string[] }): TextRecipient[] {
  const text = report.length > 200_000 ? report.slice(0, 200_000) : report;
  const exclude = new Set(opts.exclude.map((a) => a.toLowerCase()));
  const known = new Set(opts.known.map((a) => a.toLowerCase()));
  const hits: { email: string; index: number }[] = [];
  for (const re of RECIPIENT_SPOTS) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const email = m[1].replace(/\.$/, '');
      const key = email.toLowerCase();
      if (exclude.has(key) || NOT_A_RECIPIENT.test(email)) continue;
      if (known.size > 0 && !known.has(key)) continue;
      if (/^message-id|^in-reply-to|^references/i.test(text.slice(lineStart(text, m.index), m.index).trim())) continue;
      hits.push({ email, index: m.index + m[0].indexOf(m[1]) });
    }
  }
  for (const k of opts.known) if (!hits.some((h) => h.email.toLowerCase() === k.toLowerCase())) hits.push({ email: k, index: text.length });
  hits.sort((a, b) => a.index - b.index);
  // A real report names a handful of addresses; a mail naming thousands is not read further.
  hits.splice(MAX_HITS);
  // For each hit, where the next hit naming another address starts (one pass from the end).
  const nextOther: number[] = new Array(hits.length).fill(text.length);
  for (let i = hits.length - 2; i >= 0; i--) {
    nextOther[i] = hits[i + 1].email.toLowerCase() !== hits[i].email.toLowerCase() ? lineStart(text, hits[i + 1].index) : nextOther[i + 1];
  }

  const order: string[] = [];
  const chunks = new Map<string, string[]>();
  const display = new Map<string, string>();
  for (let i = 0; i < hits.length; i++) {
    const key = hits[i].email.toLowerCase();
    if (!chunks.has(key)) {
      order.push(key);
      chunks.set(key, []);
      display.set(key, hits[i].email);
    }
    // From the start of the line that names the address to the next line naming another one.
    const end = nextOther[i];
    const start = lineStart(text, hits[i].index);
    if (end > start) chunks.get(key)!.push(text.slice(start, end));
  }
  return order.map((key) => {
    const chunk = [...new Set(chunks.get(key))].join('\n').slice(0, MAX_CHUNK);
    const email = display.get(key)!;
    return { email, chunk, diagnostic: diagnosticOf(chunk, email), remoteMta: remoteMtaOf(chunk) };
  });
}
