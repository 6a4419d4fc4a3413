import type { DialectToken } from './phrase.js';

/**
 * Vendors' own status tokens and fixed wordings, read before any family (they contain dots
 * and names the family tables blank out) and trusted over the enhanced status: the MTA says
 * exactly what it means, whatever code it put in front (Office 365 writes 5.4.1 and 5.1.10 for
 * unknown recipients, Outlook.com 5.7.1 for an IP block, Gmail 5.2.1 for a disabled account).
 */
export const DIALECT_TOKENS: readonly DialectToken[] = [
  { reason: 'user_unknown', mta: 'exchange', re: /RESOLVER\.ADR\.(?:Recip(?:ient)?NotFound|ExRecipNotFound|InvalidInSmtp)|\bRecip(?:ient)?NotFound\b/i, example: '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup' },
  { reason: 'user_unknown', mta: 'exchange', re: /Recipient address rejected: Access denied\. AS\(\d+\)|\b5\.4\.1\b.{0,80}Recipient address rejected: Access denied/i, example: '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [DB5EUR03FT012.eop-EUR03.prod.protection.outlook.com]' },
  { reason: 'security_error', mta: 'exchange', re: /RESOLVER\.RST\.(?:AuthRequired|NotAuthorized)|RESOLVER\.ADR\.RecipLimit/i, example: '550 5.7.1 RESOLVER.RST.AuthRequired; authentication required' },
  { reason: 'mesg_too_big', mta: 'exchange', re: /RESOLVER\.RST\.(?:SendSizeLimit|RecipSizeLimit)/i, example: '550 5.2.3 RESOLVER.RST.RecipSizeLimit; message too large for this recipient' },
  { reason: 'filtered', mta: 'exchange', re: /RESOLVER\.RST\.(?:RestrictedToRecipientsPermission|DeliveryRestricted|SenderNotAuthenticatedFor(?:Group|Mailbox))|\b5\.7\.1(?:29|3[3-6])\b/i, example: "550 5.7.129 RESOLVER.RST.RestrictedToRecipientsPermission; You don't have permission to send to this recipient" },
  { reason: 'filtered', mta: 'exchange', re: /\b5\.1\.351\b/, example: "550 5.1.351 Remote server returned '550 5.7.1 Delivery to this mailbox is not allowed from your address'" },
  { reason: 'mailbox_full', mta: 'exchange', re: /STOREDRV\.Deliver\.Exception:QuotaExceeded|\bQuotaExceededException\b/i, example: '554 5.2.2 mailbox full; STOREDRV.Deliver.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded' },
  { reason: 'content_error', mta: 'exchange', re: /STOREDRV\.Submission\.Exception|\bWASCL\b/i, example: '554 5.6.0 STOREDRV.Submission.Exception:InvalidRecipientsException; invalid content' },
  { reason: 'blocked', mta: 'outlook.com', re: /\bS3150\b|\bSC-00[1-4]\b|\bRP-00[1-3]\b|\bDY-00[1-2]\b|\bOU-00[1-2]\b/, example: '550 5.7.1 Unfortunately, messages from [203.0.113.5] weren\'t sent. (S3150)' },
  { reason: 'spam_detected', mta: 'outlook.com', re: /\bSPM-\d{3}\b|\bHS-\d{3}\b/, example: '550 SPM-001 (COL004-MC1F43) Unfortunately, this message was deleted by our system' },
  { reason: 'user_unknown', mta: 'outlook.com', re: /\b5\.5\.0 Requested action not taken: mailbox unavailable/i, example: '550 5.5.0 Requested action not taken: mailbox unavailable (S2017062302).' },
  { reason: 'blocked', mta: 'yahoo', re: /\[TS0[1-4]\]|\[TSS0\d\]|\[BL2\d\]|\[GL0\d\]/, example: '421 4.7.0 [TS01] Messages from 203.0.113.5 temporarily deferred due to user complaints' },
  { reason: 'suspended', mta: 'yahoo', re: /This mailbox is disabled \(554\.30\)/i, example: '554 30 Sorry, your message to rcpt@example.org cannot be delivered. This mailbox is disabled (554.30).' },
  { reason: 'user_unknown', mta: 'qmail', re: /\(#5\.1\.1 - chkuser\)/i, example: '511 sorry, no mailbox here by that name (#5.1.1 - chkuser)' },
  { reason: 'not_accept', mta: 'postfix', re: /\(nullMX\)/, example: '556 5.1.10 <rcpt@example.org>: Recipient address rejected: Domain example.org does not accept mail (nullMX)' },
];
