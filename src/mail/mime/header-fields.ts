/**
 * Header fields as nodemailer's MimeNode.buildHeaders() writes them, without a MIME tree.
 * Every value still goes through the library's own encoder (`encodeHeaderValue` of one
 * long-lived node: addresses with punycode and quoting, message ids, dates, encoded words for
 * non-ASCII or control characters) and its folding (`foldLines` at 76 columns); what is left
 * out is the tree around them: building a node per part, the header list searched (and every
 * key normalised again) on each get and set, the random bytes and the date each node draws.
 */
import MimeNode from 'nodemailer/lib/mime-node';
import { buildHeaderValue, encodeWord, foldLines, parseHeaderValue } from 'nodemailer/lib/mime-funcs';
import { BoundedMap } from '../../lib/bounded-map.js';

/**
 * A value written as it is (RFC 2047 words made by the caller), folded like nodemailer folds a
 * `{ prepared: true, foldLines: true }` header value.
 */
export interface PreparedValue {
  prepared: true;
  foldLines: true;
  value: string;
}

export type HeaderValue = string | Date | PreparedValue | { name: string; address: string } | { name: string; address: string }[];

interface LibraryNode {
  encodeHeaderValue(key: string, value: unknown): string;
  _normalizeHeaderKey(key: string): string;
}

/** Holds no state encodeHeaderValue reads but its (default) text encoding: one serves every message. */
const encoder = new MimeNode('text/plain', {}) as unknown as LibraryNode;

/**
 * encodeHeaderValue starts by normalising the key it is given (three regular expression
 * replacements), which for a message's six or so fields cost more than some of the encodings:
 * this node's normalisation is memoised, a pure function of the key (headerKey below).
 */
const libraryHeaderKey = encoder._normalizeHeaderKey.bind(encoder);
encoder._normalizeHeaderKey = (key: string) => (typeof key === 'string' ? headerKey(key) : libraryHeaderKey(key));

const isPrepared = (value: HeaderValue): value is PreparedValue =>
  typeof value === 'object' && !Array.isArray(value) && (value as PreparedValue).prepared === true;

/**
 * One header field, folded, without its line break; null when nodemailer leaves it out (a
 * value that encodes to nothing but whitespace). `key` is already in nodemailer's case.
 */
export function headerField(key: string, value: HeaderValue): string | null {
  if (isPrepared(value)) {
    if (!value.value.trim()) return null;
    return foldLines(`${key}: ${value.value}`);
  }
  const encoded = encoder.encodeHeaderValue(key, value);
  if (!encoded.trim()) return null;
  return foldLines(`${key}: ${encoded}`, 76);
}

/**
 * One plain address (`user@example.com`: a dot-atom of letters, digits, `_`, `+` and `-`, at a
 * lower-case ASCII domain name), which nodemailer's address parser, normaliser and punycode
 * (~8 µs for a per-recipient To) give back as it is.
 */
const PLAIN_ADDRESS = /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;
/** foldLines(field, 76) leaves a field shorter than 76 characters on one line. */
const FOLD_LENGTH = 76;

/**
 * headerField for a recipient field (To, Cc): a single plain address that fits
 * on one line is the field as it is; anything else goes through nodemailer. The address comes
 * as a string or, as compose.ts hands recipients over, as one mailbox without a name.
 * test/mail/mime-address-field.test.ts proves it equal to headerField.
 */
export function addressField(key: string, value: HeaderValue): string | null {
  const address = typeof value === 'string' ? value : Array.isArray(value) && value.length === 1 && value[0].name === '' ? value[0].address : null;
  if (address !== null && key.length + address.length + 2 < FOLD_LENGTH && PLAIN_ADDRESS.test(address)) return `${key}: ${address}`;
  return headerField(key, value);
}

/**
 * headerField is a function of the key and the value only, and some of a message's header
 * values repeat from one copy of a template to the next (From, Reply-To, custom headers,
 * List-Unsubscribe-Post): those are encoded once. The memo key tells a string from a prepared
 * value from mailboxes; a header name holds no ':'.
 */
const repeatedFields = new BoundedMap<string, string | null>(1000);

function memoKey(key: string, value: Exclude<HeaderValue, Date>): string {
  if (typeof value === 'string') return `s${key}:${value}`;
  if (isPrepared(value)) return `p${key}:${value.value}`;
  const list = Array.isArray(value) ? value : [value];
  return `m${key}:${JSON.stringify(list.map((m) => [m.name, m.address]))}`;
}

/**
 * headerField for a value likely to repeat across messages (not a recipient, a message id or
 * a date): the folded field, written once per distinct key and value.
 */
export function repeatedHeaderField(key: string, value: Exclude<HeaderValue, Date>): string | null {
  const memo = memoKey(key, value);
  let field = repeatedFields.get(memo);
  if (field === undefined) {
    field = headerField(key, value);
    repeatedFields.set(memo, field);
  }
  return field;
}

/** Custom header names are few and repeat: nodemailer's Camel-Case of each is memoised. */
const normalizedKeys = new BoundedMap<string, string>(1000);

/** The name nodemailer gives a custom header (`x-campaign` → `X-Campaign`, `mime-foo` → `MIME-Foo`). */
export function headerKey(name: string): string {
  let key = normalizedKeys.get(name);
  if (key === undefined) {
    key = libraryHeaderKey(name);
    normalizedKeys.set(name, key);
  }
  return key;
}

/** A structured value with parameters, as buildHeaderValue joins it (quoting, RFC 2231). */
export function withParameters(value: string, params: Record<string, string>): string {
  return buildHeaderValue({ value, params });
}

interface LibraryTextEncoder {
  _getTextEncoding(value: string): string;
  _encodeWords(value: string): string;
}

/**
 * An attachment part's Content-Type and Content-Disposition values, as buildHeaders writes
 * them for a node with a filename: the filename as the disposition's `filename` parameter
 * (RFC 2231 when it needs it) and, for clients that read only that, as a `name` parameter of
 * the type in an encoded word, quoted when it holds specials.
 */
export function attachmentTypeAndDisposition(contentType: string, filename: string): { type: string; disposition: string } {
  const lib = encoder as unknown as LibraryTextEncoder;
  const structured = parseHeaderValue(contentType, { stripComments: true });
  structured.value = String(structured.value ?? '').replace(/[\x00-\x1f\x7f]/g, '');
  for (const key of Object.keys(structured.params)) if (/^name(\*|$)/i.test(key)) delete structured.params[key];
  let name = /[\x00-\x1f\x7f]/.test(filename) ? encodeWord(filename, lib._getTextEncoding(filename), 52) : lib._encodeWords(filename);
  if (name !== filename || /[\s'"\\;:/=(),<>@[\]?]|^-/.test(name)) name = JSON.stringify(name);
  const disposition = parseHeaderValue('attachment', { stripComments: true });
  disposition.params.filename = filename;
  return { type: `${buildHeaderValue(structured)}; name=${name}`, disposition: buildHeaderValue(disposition) };
}
