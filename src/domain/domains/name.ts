import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { invalid } from '../../errors.js';

/**
 * Sender domain names and the names derived from them.
 *
 * Selectors are `plr-<8 hex>` (RSA) and `ple-<8 hex>` (Ed25519) with one shared random tag, so
 * the pair is recognisable in a zone, two accounts adding the same domain never collide, and a
 * re-added domain gets fresh selectors rather than colliding with a stale record.
 */
export const SELECTOR_TAG_HEX = 8;
export const RSA_SELECTOR_PREFIX = 'plr-';
export const ED_SELECTOR_PREFIX = 'ple-';

const MAX_NAME = 253;
const MAX_LABEL = 63;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

/**
 * The longest name we ask a customer to publish is `<selector>._domainkey.<domain>`. A DNS name
 * is at most 253 characters in text form, so a domain longer than this leaves records that
 * cannot exist: it is refused up front rather than accepted and never verifiable.
 */
export const MAX_DOMAIN_NAME = MAX_NAME - `${RSA_SELECTOR_PREFIX}${'x'.repeat(SELECTOR_TAG_HEX)}._domainkey.`.length;

export function newSelectors(): { rsa: string; ed: string } {
  const tag = randomBytes(SELECTOR_TAG_HEX / 2).toString('hex');
  return { rsa: RSA_SELECTOR_PREFIX + tag, ed: ED_SELECTOR_PREFIX + tag };
}

/**
 * A sender domain as stored and compared: lower-case ASCII (IDNA, punycode) form. Throws
 * `validation_failed` on field `name` with the reason.
 */
export function normalizeDomainName(input: string): string {
  const given = input.trim().toLowerCase();
  if (given === '') throw invalid('name', 'must not be empty');
  if (given.endsWith('.')) throw invalid('name', 'must not end with a dot (write example.com, not example.com.)');
  if (/[\s/:@]/.test(given)) throw invalid('name', 'must be a bare domain name like example.com, without scheme, path or address');
  const ascii = domainToASCII(given);
  if (!ascii) throw invalid('name', 'is not a valid domain name');
  const labels = ascii.split('.');
  if (labels.length < 2) throw invalid('name', 'must have at least two labels, like example.com');
  if (labels.includes('')) throw invalid('name', 'must not contain an empty label (two dots in a row or a leading dot)');
  const long = labels.find((l) => l.length > MAX_LABEL);
  if (long) throw invalid('name', `label "${long.slice(0, 20)}…" is longer than ${MAX_LABEL} characters`);
  const bad = labels.find((l) => !LDH_LABEL.test(l));
  if (bad !== undefined) throw invalid('name', `label "${bad}" may contain only letters, digits and inner hyphens`);
  if (/^[0-9]+$/.test(labels[labels.length - 1])) throw invalid('name', 'must be a domain name, not an IP address');
  if (ascii.length > MAX_NAME) throw invalid('name', `must be at most ${MAX_NAME} characters`);
  if (ascii.length > MAX_DOMAIN_NAME) {
    throw invalid('name', `must be at most ${MAX_DOMAIN_NAME} characters, so that its DKIM record name stays within the 253 characters DNS allows`);
  }
  return ascii;
}

/**
 * The return-path (envelope sender, MAIL FROM) domain: `bounces.<domain>`. A subdomain of the
 * sender domain, so SPF passes *aligned* under DMARC's relaxed mode, its MX points at our
 * inbound listener so bounces come back to us (see mail/verp.ts), and it never touches the
 * customer's own MX or SPF record.
 */
export function bounceDomainFor(domainName: string): string {
  return `bounces.${domainName.toLowerCase().replace(/\.$/, '')}`;
}

/** The white-label tracking host the customer points at POSTLINE_TRACKING_HOST. */
export function trackingHostFor(domainName: string): string {
  return `track.${domainName.toLowerCase().replace(/\.$/, '')}`;
}

/** The domain part of an address in matching form (lower-case ASCII), or null. */
export function domainOfAddress(email: string): string | null {
  const at = email.lastIndexOf('@');
  if (at < 1) return null;
  const domain = domainToASCII(email.slice(at + 1).trim().replace(/>$/, '').toLowerCase());
  return domain || null;
}
