import type { MessageRow } from '../db/queries/messages.js';
import { composeMessage, htmlToText } from '../mail/compose.js';
import { signMessage, type DkimSigningKey } from '../mail/dkim.js';
import { rewriteHtml } from '../mail/html-rewrite.js';
import { encodeVerp } from '../mail/verp.js';
import { escapeHtml } from '../templates/index.js';
import { isTrackableUrl } from './tracking-tokens.js';
import type { TrackingLinks } from './tracking-links.js';

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
  opts: { bounceDomain: string; verpKey: Buffer; now: Date },
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
  const html =
    rowHtml === null
      ? undefined
      : rewriteHtml(rowHtml, {
          clickUrl: (url) => (url === unsubscribeUrl || !isTrackableUrl(url) ? null : links.click(row.id, url, th)),
          pixelUrl: links.open(row.id, th),
          footerHtml: rowHtml.includes(unsubscribeUrl) ? undefined : footerHtml(unsubscribeUrl, signing.domain),
        });
  // Without a text part of its own, the text is made from the tracked HTML, so its links are
  // tracked too and it already carries the footer. A text part given by the sender is kept
  // as written, with the footer appended.
  const baseText = rowText ?? (html !== undefined ? htmlToText(html) : '');
  const text = baseText.includes(unsubscribeUrl) ? baseText : baseText + footerText(unsubscribeUrl);
  const composed = await composeMessage({
    from: { email: row.from_email, ...(row.from_name ? { name: row.from_name } : {}) },
    // The envelope recipient is row.to_email; the headers are the send's: its To and Cc, never Bcc.
    to: row.header_to ?? row.to_email,
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
  const raw = await signMessage(composed, { domain: signing.domain, keys: signing.keys, signTime: opts.now });
  return { raw, returnPath };
}
