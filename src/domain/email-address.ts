import { domainToASCII } from 'node:url';
import emailAddresses from 'email-addresses';
import { BoundedMap } from '../lib/bounded-map.js';

/**
 * Email addresses as Postline accepts them: one bare address (`local@domain`), parsed by a
 * real RFC 5322/6532 parser (`email-addresses`), then held to the stricter rules mail actually
 * travels by (RFC 5321): a domain name of LDH labels with at least two labels and an
 * alphabetic TLD, no domain literals, local part ≤ 64 octets, whole address ≤ 254 octets.
 *
 * Addresses are stored as given and compared by `key`: the local part lower-cased and the
 * domain lower-cased in its ASCII (punycode) form, so `Bob@Exämple.de` and
 * `bob@xn--exmple-cua.de` are the same recipient (docs/architecture.md#identifiers-and-data).
 */
export interface EmailAddress {
  /** As given, surrounding whitespace removed. */
  readonly address: string;
  readonly local: string;
  /** As given. */
  readonly domain: string;
  /** Matching form: lower-cased local part @ lower-cased ASCII domain. */
  readonly key: string;
}

export type AddressCheck = { ok: true; value: EmailAddress } | { ok: false; message: string };

const MAX_ADDRESS_OCTETS = 254;
const MAX_LOCAL_OCTETS = 64;
const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Parses are remembered: one send parses each of its addresses several times (validation,
 * suppression key, recipient domain) and a sender's From repeats on every send, while the RFC
 * 5322 parser costs ~40 µs an address (bench/send-api: 16 % of the API's CPU). The result is
 * a pure function of the input; inputs longer than any valid address are not kept, and the
 * memo drops its oldest parse when full.
 */
const MAX_REMEMBERED = 10_000;
const parsed = new BoundedMap<string, AddressCheck>(MAX_REMEMBERED);
const MAX_REMEMBERED_INPUT = 320;

export function parseEmailAddress(input: string): AddressCheck {
  let result = parsed.get(input);
  if (result) return result;
  result = Object.freeze(parseUncached(input));
  if (input.length <= MAX_REMEMBERED_INPUT) {
    parsed.set(input, result);
  }
  return result;
}

function parseUncached(input: string): AddressCheck {
  const address = input.trim();
  if (address === '') return { ok: false, message: 'must not be empty' };
  if (Buffer.byteLength(address) > MAX_ADDRESS_OCTETS) return { ok: false, message: `must be at most ${MAX_ADDRESS_OCTETS} bytes` };
  const parsed = plainAddressParts(address) ?? addressPartsByParser(address);
  if ('message' in parsed) return { ok: false, message: parsed.message };
  if (Buffer.byteLength(parsed.local) > MAX_LOCAL_OCTETS) return { ok: false, message: `local part must be at most ${MAX_LOCAL_OCTETS} bytes` };
  const domain = asciiDomain(parsed.domain);
  if (!domain) return { ok: false, message: 'domain is not a valid domain name' };
  return { ok: true, value: Object.freeze({ address, local: parsed.local, domain: parsed.domain, key: `${parsed.local.toLowerCase()}@${domain}` }) };
}

type AddressParts = { local: string; domain: string } | { message: string };

/** RFC 5322 atext: what a dot-atom's atoms are made of. */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
/** The everyday shape: a dot-atom local part @ a dot-atom domain of at least two ASCII LDH-ish atoms. */
const PLAIN_ADDRESS = new RegExp(`^${ATEXT}(?:\\.${ATEXT})*@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)+$`);

/**
 * The narrow path: an address of the everyday shape splits at its only `@` into what the RFC
 * 5322 parser would return for it, without running the parser (~40 µs an address; the send
 * API parses each new recipient once: bench/accept). Any other shape (quotes, comments,
 * whitespace, UTF-8, literals, a dot out of place) is null and goes to the parser. Proven equal
 * to the parser over a generated corpus by test/suppression/address-narrow-path.test.ts.
 */
export function plainAddressParts(address: string): { local: string; domain: string } | null {
  if (!PLAIN_ADDRESS.test(address)) return null;
  const at = address.indexOf('@');
  return { local: address.slice(0, at), domain: address.slice(at + 1) };
}

/** The general path: `email-addresses`, an RFC 5322/6532 parser, holding the input to one bare address. */
export function addressPartsByParser(address: string): AddressParts {
  const parsed = emailAddresses.parseOneAddress({ input: address, rfc6532: true, rejectTLD: true });
  if (!parsed || parsed.type !== 'mailbox') return { message: 'is not an email address' };
  // A display name, angle brackets or comments mean the input was more than an address.
  if (parsed.name !== null || parsed.parts.comments.length > 0 || parsed.parts.address.tokens.trim() !== address) {
    return { message: 'must be a bare address like name@example.com, without a display name or comments' };
  }
  return { local: parsed.local, domain: parsed.domain };
}

/** Lower-cased ASCII form of a mail domain, or null when it is not a usable domain name. */
function asciiDomain(domain: string): string | null {
  if (domain.startsWith('[')) return null; // address literals: not accepted for recipients
  const ascii = domainToASCII(domain);
  if (!ascii || ascii.length > 253) return null;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((l) => LDH_LABEL.test(l))) return null;
  if (/^[0-9]+$/.test(labels[labels.length - 1])) return null; // 1.2.3.4 is an IP, not a domain
  return ascii;
}

/** The matching key of a valid address, or null when it does not parse. */
export function emailKey(input: string): string | null {
  const r = parseEmailAddress(input);
  return r.ok ? r.value.key : null;
}

/**
 * The form an address takes in the SMTP envelope: the local part as given and the domain in
 * its ASCII (punycode) form, or null when the local part is not ASCII. Such an address needs
 * SMTPUTF8 (RFC 6531) end to end; Postline refuses it at the API (docs/sending.md,
 * "Internationalised addresses"), and the delivery engine fails, as its own fault, any that
 * reach it by another path.
 */
export function envelopeAddress(input: string): string | null {
  const r = parseEmailAddress(input);
  if (!r.ok || !isAsciiLocalPart(r.value.local)) return null;
  return `${r.value.local}@${r.value.key.slice(r.value.key.lastIndexOf('@') + 1)}`;
}

export function isAsciiLocalPart(local: string): boolean {
  return /^[\x00-\x7f]*$/.test(local);
}
