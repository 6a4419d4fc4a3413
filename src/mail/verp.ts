/**
 * VERP return paths: the envelope sender (MAIL FROM, later the Return-Path) of every message
 * names the message, so an asynchronous bounce (a DSN sent to the return path hours later)
 * is attributed to exactly one message without parsing the DSN's guesswork.
 *
 *   bounces+<messageId>=<tag>@<bounce domain>
 *   e.g. bounces+msg_0193a1b2c3d4e5f60718293a4b5c6d7e=3f9c1a0b7e2d@bounces.example.com
 *
 * `tag` is the first 12 hex characters (48 bits) of HMAC-SHA256(key, messageId). Why sign:
 * bounces arrive from anyone on the internet, and a bounce suppresses the recipient and
 * marks the message. Without the tag, whoever learns (or guesses, ids are time-ordered) a
 * message id could forge bounces and get arbitrary customers' recipients suppressed. With
 * it, only addresses we issued decode; anything else is ignored. 48 bits make blind guessing
 * hopeless at any rate a mail server would accept, while keeping the local part at 57
 * characters, under the 64 of RFC 5321.
 *
 * Everything is lower case hex, '_', '+' and '=' because some MTAs lower-case local parts;
 * decoding is case-insensitive for the same reason. Pass the key from
 * `deriveKey(config.secret, 'verp')` (keyring.ts); a process that encodes many passes it as a
 * KeyObject (`createSecretKey`), imported once: on Node 24 an HMAC keyed with a Buffer checks the
 * key's type by catching exceptions, ~12 µs against ~2 µs with a KeyObject (decision 0054).
 */
import { createHmac, timingSafeEqual, type KeyObject } from 'node:crypto';

export type VerpKey = Buffer | string | KeyObject;

const PREFIX = 'bounces';
const TAG_LENGTH = 12;
const MESSAGE_ID = /^[a-z]+_[0-9a-z]{1,40}$/;

function tag(key: VerpKey, messageId: string): string {
  return createHmac('sha256', key).update(messageId).digest('hex').slice(0, TAG_LENGTH);
}

export function encodeVerp(messageId: string, bounceDomain: string, key: VerpKey): string {
  const id = messageId.toLowerCase();
  if (!MESSAGE_ID.test(id)) throw new Error(`not a message id: ${messageId}`);
  return `${PREFIX}+${id}=${tag(key, id)}@${bounceDomain.toLowerCase()}`;
}

export type VerpDecode =
  | { ok: true; messageId: string; domain: string }
  | { ok: false; reason: 'not_verp' | 'bad_signature' };

/** Decode a bounce recipient (with or without angle brackets). Never throws. */
export function decodeVerp(address: string, key: VerpKey): VerpDecode {
  const m = /^<?bounces\+([a-z]+_[0-9a-z]{1,40})=([0-9a-f]+)@([^\s@<>]+)>?$/.exec(address.trim().toLowerCase());
  if (!m) return { ok: false, reason: 'not_verp' };
  const [, messageId, given, domain] = m;
  const expected = Buffer.from(tag(key, messageId));
  const actual = Buffer.from(given);
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return { ok: false, reason: 'bad_signature' };
  return { ok: true, messageId, domain };
}
