import type { AddressObject, ParsedMail } from 'mailparser';
import { emailKey } from '../domain/email-address.js';
import type { SendRequest } from '../domain/sending/send-input.js';
import { AppError, invalid } from '../errors.js';
import { isReservedHeader } from '../mail/compose.js';

/** The per-message tracking switch: `opens`, `clicks`, `opens,clicks` or `none`; removed before sending. */
export const TRACK_HEADER = 'x-postline-track';

/** Envelope recipients of one submission: as many as the API takes in one send. */
export const MAX_SUBMISSION_RECIPIENTS = 50;

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  const out: string[] = [];
  const walk = (list: { address?: string; group?: { address?: string }[] }[]) => {
    for (const a of list) {
      if (a.group) walk(a.group);
      else if (a.address) out.push(a.address);
    }
  };
  for (const o of field === undefined ? [] : Array.isArray(field) ? field : [field]) walk(o.value);
  return out;
}

function trackingOf(value: string | undefined): SendRequest['tracking'] {
  if (value === undefined) return undefined;
  const words = value.toLowerCase().split(',').map((w) => w.trim()).filter(Boolean);
  if (words.length === 1 && words[0] === 'none') return { opens: false, clicks: false };
  if (words.length === 0 || words.some((w) => w !== 'opens' && w !== 'clicks')) {
    throw invalid('headers.X-Postline-Track', 'must be "opens", "clicks", "opens,clicks" or "none"');
  }
  return { opens: words.includes('opens'), clicks: words.includes('clicks') };
}

/** A header line's value, unfolded; encoded words stay as written (they are ASCII and re-sent as they came). */
function unfolded(line: string): string {
  return line.slice(line.indexOf(':') + 1).replace(/\r?\n(?=[ \t])/g, '').trim();
}

/**
 * Headers passed on as the API's `headers`: every one the composer does not own (In-Reply-To,
 * References, X-…), except ours (X-Postline-*) and trace fields, which the receiving side adds.
 */
function passedHeaders(mail: ParsedMail): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { key, line } of mail.headerLines) {
    if (isReservedHeader(key) || key.startsWith('x-postline-')) continue;
    const name = line.slice(0, line.indexOf(':')).trim();
    // A header given twice keeps its last value: `headers` holds one value per name.
    out[name] = unfolded(line);
  }
  return out;
}

/**
 * A submitted message as a send request: the envelope decides who receives it (RCPT TO, so
 * Bcc recipients too), the To and Cc headers stay as written, the Bcc header goes. The head of
 * the send (`to`, whose id the 250 names) is the first envelope recipient named in To, else
 * in Cc, else the first one; other recipients named in a header are delivered as cc, the rest
 * as bcc. Content is taken as written, never rendered as a template.
 */
export function toSendRequest(mail: ParsedMail, envelopeTo: string[]): SendRequest {
  const from = mail.from?.value[0];
  if (!from?.address) throw invalid('from.email', 'the message needs a From header with an address');
  const headerTo = addresses(mail.to);
  const headerCc = addresses(mail.cc);
  if (headerTo.length === 0) throw invalid('to', 'the message needs a To header (list Bcc recipients in the envelope only)');
  const key = (a: string) => emailKey(a) ?? a.toLowerCase();
  const inTo = new Set(headerTo.map(key));
  const inCc = new Set(headerCc.map(key));
  const head = envelopeTo.find((a) => inTo.has(key(a))) ?? envelopeTo.find((a) => inCc.has(key(a))) ?? envelopeTo[0];
  const rest = envelopeTo.filter((a) => a !== head);
  const shown = rest.filter((a) => inTo.has(key(a)) || inCc.has(key(a)));
  const hidden = rest.filter((a) => !shown.includes(a));
  const headers = passedHeaders(mail);
  const track = mail.headers.get(TRACK_HEADER);
  if (mail.html === false && mail.text === undefined) throw new AppError('validation_failed', 'the message has no text or html body');
  return {
    to: head,
    from: { email: from.address, ...(from.name ? { name: from.name } : {}) },
    subject: mail.subject ?? '',
    ...(mail.html !== false ? { html: mail.html } : {}),
    ...(mail.text !== undefined ? { text: mail.text } : {}),
    ...(shown.length > 0 ? { cc: shown } : {}),
    ...(hidden.length > 0 ? { bcc: hidden } : {}),
    ...(mail.replyTo ? { replyTo: addresses(mail.replyTo)[0] } : {}),
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(mail.attachments.length > 0
      ? { attachments: mail.attachments.map((a, i) => ({ filename: a.filename ?? `attachment-${i + 1}`, content: a.content.toString('base64'), contentType: a.contentType })) }
      : {}),
    tracking: trackingOf(typeof track === 'string' ? track : undefined),
    submitted: { headerTo, headerCc },
  };
}
