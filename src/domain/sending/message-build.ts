import type { MessageRow } from '../../db/queries/messages.js';
import { composeWritten, htmlToText } from '../../mail/compose.js';
import { signMessage, signWrittenMessage, type DkimSigningKey } from '../../mail/dkim.js';
import { rewriteHtml } from '../../mail/html-rewrite.js';
import { encodeVerp, type VerpKey } from '../../mail/verp.js';
import { messageWithDataWire } from '../../mail/smtp-data/made-with-message.js';
import { escapeHtml } from '../../templates/index.js';
import { ContentCache } from '../../lib/content-cache.js';
import { isTrackableUrl } from '../tracking/tokens.js';
import type { TrackingLinks } from '../tracking/links.js';

export interface SigningInfo {
  domain: string;
  keys: DkimSigningKey[];
  /** `track.<domain>` when its CNAME is verified; else null (links use the base URL). */
  trackingHost: string | null;
}

export interface BuiltMessage {
  raw: Buffer;
  /** MAIL FROM: the VERP address that ties a later bounce to this message. */
  returnPath: string;
}

function footerHtml(unsubscribeUrl: string, domain: string): string {
  return (
    `<p style="margin:24px 0 0;font-size:12px;line-height:18px;color:#6b7280;text-align:center">` +
    `You received this email from ${escapeHtml(domain)}. ` +
    `<a href="${escapeHtml(unsubscribeUrl)}" style="color:#6b7280">Unsubscribe</a></p>`
  );
}

/**
 * The text part of an html-only message is derived from the content before tracking, once per
 * distinct content (html-to-text was 17 % of a worker's CPU when it ran on every tracked
 * copy): a campaign's or a template's copies share it. Each copy's tracked links are then put
 * in place of the original URLs. Bounded: the oldest entry goes first. A document not seen
 * before costs only its new blocks: htmlToText keeps the text of each block (decision 0042).
 */
const TEXT_CACHE_ENTRIES = 256;
const derivedTexts = new ContentCache<string>(TEXT_CACHE_ENTRIES);

function derivedText(html: string): string {
  let text = derivedTexts.get(html);
  if (text === undefined) {
    text = htmlToText(html);
    derivedTexts.set(html, text);
  }
  return text;
}

/** Original URL → this copy's tracked URL, longest first so that no URL is replaced inside a longer one. */
function placeTrackedLinks(text: string, tracked: Map<string, string>): string {
  const originals = [...tracked.keys()].sort((a, b) => b.length - a.length);
  for (const url of originals) text = text.split(url).join(tracked.get(url)!);
  return text;
}

function footerText(unsubscribeUrl: string): string {
  return `\n\n--\nUnsubscribe: ${unsubscribeUrl}\n`;
}

/**
 * The exact bytes that leave: the stored (already rendered) content with every http(s) link
 * rewritten to a signed click URL, the open pixel, the unsubscribe footer in both parts
 * (unless the template placed {{ unsubscribe_url }} itself), RFC 8058 List-Unsubscribe
 * headers, composed once and DKIM-signed (RSA + Ed25519) over the result.
 *
 * One row is one envelope recipient (migration 011): the To and Cc headers are the send's,
 * the envelope recipient (`returnPath` goes with it) is `row.to_email`.
 */
export async function buildMessage(
  row: MessageRow,
  signing: SigningInfo,
  links: TrackingLinks,
  opts: { bounceDomain: string; verpKey: VerpKey; now: Date },
): Promise<BuiltMessage> {
  const th = signing.trackingHost;
  const unsubscribeUrl = links.unsubscribe(row.id, th);
  const returnPath = encodeVerp(row.id, opts.bounceDomain, opts.verpKey);
  // A cc/bcc copy shares the content rendered for the send's `to` row, whose {{ unsubscribe_url }}
  // names that row: each copy gets its own, so one recipient can never unsubscribe another.
  const groupId = row.group_id ?? row.id;
  const ownLinks = (content: string | null): string | null => {
    if (content === null || groupId === row.id) return content;
    return content.split(links.unsubscribe(groupId, th)).join(unsubscribeUrl);
  };
  const rowHtml = ownLinks(row.html);
  const rowText = ownLinks(row.text);
  const tracked = new Map<string, string>();
  const trackClicks = row.track_clicks !== false;
  const html =
    rowHtml === null
      ? undefined
      : rewriteHtml(rowHtml, {
          clickUrl: (url) => {
            if (!trackClicks || url === unsubscribeUrl || !isTrackableUrl(url)) return null;
            const click = links.click(row.id, url, th);
            tracked.set(url, click);
            return click;
          },
          pixelUrl: row.track_opens === false ? undefined : links.open(row.id, th),
          footerHtml: rowHtml.includes(unsubscribeUrl) ? undefined : footerHtml(unsubscribeUrl, signing.domain),
        });
  // Without a text part of its own, the text is made from the HTML (once per distinct content)
  // with this copy's tracked links in place of the originals, and the footer appended. A text
  // part given by the sender is kept as written, with the footer appended.
  const baseText = rowText ?? (rowHtml !== null ? placeTrackedLinks(derivedText(rowHtml), tracked) : '');
  const text = baseText.includes(unsubscribeUrl) ? baseText : baseText + footerText(unsubscribeUrl);
  const composed = await composeWritten({
    from: { email: row.from_email, ...(row.from_name ? { name: row.from_name } : {}) },
    // The envelope recipient is row.to_email; the headers are the send's: its To and Cc, never Bcc.
    // header_to may list several addresses (SMTP submission keeps its To header as written).
    to: row.header_to ? row.header_to.split(', ') : row.to_email,
    cc: row.cc.length > 0 ? row.cc : undefined,
    replyTo: row.reply_to ?? undefined,
    subject: row.subject,
    html,
    text,
    headers: row.headers,
    attachments: row.attachments.map((a) => ({ filename: a.filename, content: Buffer.from(a.content, 'base64'), contentType: a.contentType })),
    // One send, one Message-ID for every recipient's copy (replies thread together); each
    // copy still has its own VERP return path and tracking links, which name the row.
    messageId: `${groupId}@${signing.domain}`,
    date: opts.now,
    listUnsubscribe: { url: links.oneClick(row.id), mailto: `mailto:${returnPath}?subject=unsubscribe` },
  });
  // The narrow writer's strings are signed as they are and made bytes once, signatures included,
  // with the SMTP DATA wire form in the same buffer when it is the message and a terminator.
  const dkim = { domain: signing.domain, keys: signing.keys, signTime: opts.now };
  const raw = Buffer.isBuffer(composed) ? await signMessage(composed, dkim) : await signWrittenMessage(composed, dkim, messageWithDataWire);
  return { raw, returnPath };
}
