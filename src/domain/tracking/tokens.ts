/**
 * Signed tracking tokens (docs/architecture.md#white-label-tracking): the opaque part of open-pixel, click and
 * unsubscribe URLs, and a generic signed payload other features reuse (e.g. double opt-in).
 *
 *   token   = payload "." mac
 *   payload = base64url(UTF-8 JSON array [kind, expiresAt, ...fields])
 *             expiresAt: Unix seconds, 0 = never (tracking links in old mail must keep working)
 *   mac     = base64url(first 16 bytes (128 bits) of
 *             HMAC-SHA256(key, "postline-token/v1/" + kind + "\n" + payload))
 *
 * Why this shape:
 * - The MAC covers the payload *as transmitted* (its base64url text), so there is exactly one
 *   accepted spelling of every token: base64's slack bits in the last character cannot be
 *   flipped unnoticed, and the MAC is compared as text for the same reason.
 * - The kind is both inside the payload and in the MAC's domain-separation prefix, so an open
 *   token can never be replayed as a click or unsubscribe token, nor a token of another feature.
 * - Nothing secret is in clear: the payload carries ids and the target URL, which the
 *   recipient already has. The click URL is signed, so a tampered link cannot redirect
 *   anywhere else (no open redirect); it is also re-checked to be http(s) on verification.
 * - JSON rather than a binary layout: extensible per kind, and the ids dominate the size
 *   anyway (an open token is 85 characters).
 *
 * Verification never throws: any malformed, oversize (> 8 KB), truncated, altered, foreign
 * (other key) or wrong-kind token is `null`. Signing throws on programmer errors (bad kind,
 * bad message id, non-http(s) URL, result over the size limit).
 *
 * `key`: pass `deriveKey(config.secret, 'tracking')` (src/mail/keyring.ts), not the root secret.
 */
import crypto from 'node:crypto';
import { BoundedMap } from '../../lib/bounded-map.js';

export const MAX_TOKEN_LENGTH = 8 * 1024;
const MAC_BYTES = 16;
const MAC_CHARS = Math.ceil((MAC_BYTES * 8) / 6); // 22, unpadded base64url
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const KIND = /^[a-z][a-z0-9-]{0,15}$/;
/** Our public message ids (`msg_` + hex), lower case as in verp.ts. */
const MESSAGE_ID = /^[a-z]+_[0-9a-z]{1,40}$/;
const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/** A KeyObject (createSecretKey) spares node:crypto importing the key again for every token. */
export type TokenKey = Buffer | string | crypto.KeyObject;

/** Kinds used by tracking. Other features pick their own (e.g. 'd' for double opt-in). */
export const TOKEN_KINDS = { open: 'o', click: 'c', unsubscribe: 'u' } as const;

// ---------------------------------------------------------------------------------------
// Generic signed payload

/**
 * Sign `fields` under `kind`. `expiresAt` makes the token invalid from that instant on
 * (second precision); default: never expires.
 */
export function signPayload(key: TokenKey, kind: string, fields: readonly string[], opts: { expiresAt?: Date } = {}): string {
  if (!KIND.test(kind)) throw new TypeError(`invalid token kind: ${JSON.stringify(kind)}`);
  if (!fields.every((f) => typeof f === 'string')) throw new TypeError('token fields must be strings');
  let exp = 0;
  if (opts.expiresAt !== undefined) {
    exp = Math.ceil(opts.expiresAt.getTime() / 1000);
    if (!Number.isSafeInteger(exp) || exp <= 0) throw new TypeError('invalid expiresAt');
  }
  const payload = Buffer.from(JSON.stringify([kind, exp, ...fields]), 'utf8').toString('base64url');
  const token = `${payload}.${mac(key, kind, payload)}`;
  if (token.length > MAX_TOKEN_LENGTH) throw new RangeError(`token would exceed ${MAX_TOKEN_LENGTH} characters`);
  return token;
}

/** The fields of a valid, unexpired token of this kind signed with this key; otherwise null. */
export function verifyPayload(key: TokenKey, kind: string, token: unknown, opts: { now?: Date } = {}): string[] | null {
  if (typeof token !== 'string' || token.length > MAX_TOKEN_LENGTH || !KIND.test(kind)) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
  const payload = token.slice(0, dot);
  const given = token.slice(dot + 1);
  if (given.length !== MAC_CHARS || !BASE64URL.test(payload) || !BASE64URL.test(given)) return null;
  // Equal lengths were checked above (length is not secret); the content is compared in
  // constant time.
  if (!crypto.timingSafeEqual(Buffer.from(mac(key, kind, payload), 'ascii'), Buffer.from(given, 'ascii'))) return null;

  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(decoded) || decoded.length < 2 || decoded[0] !== kind) return null;
  const exp = decoded[1];
  if (!Number.isSafeInteger(exp) || exp < 0) return null;
  if (exp > 0 && (opts.now ?? new Date()).getTime() >= exp * 1000) return null;
  const fields = decoded.slice(2);
  return fields.every((f): f is string => typeof f === 'string') ? fields : null;
}

function mac(key: TokenKey, kind: string, payload: string): string {
  return crypto
    .createHmac('sha256', key)
    .update(`postline-token/v1/${kind}\n${payload}`)
    .digest()
    .toString('base64url', 0, MAC_BYTES);
}

// ---------------------------------------------------------------------------------------
// Tracking tokens

/**
 * A URL we agree to track and redirect to: absolute http(s) with a host, no control
 * characters (they would end up in a Location header).
 */
export function isTrackableUrl(url: string): boolean {
  let trackable = trackableUrls.get(url);
  if (trackable === undefined) {
    trackable = parsesAsTrackable(url);
    if (url.length <= MEMO_URL_MAX_LENGTH) trackableUrls.set(url, trackable);
  }
  return trackable;
}

/**
 * The answer is a function of the URL alone, and a template's links repeat in every copy, each
 * asked twice (the rewrite, then signClickToken): parsing one with `new URL` cost ~2 µs.
 */
const trackableUrls = new BoundedMap<string, boolean>(1000);
const MEMO_URL_MAX_LENGTH = 2048;

function parsesAsTrackable(url: string): boolean {
  if (!/^https?:\/\//i.test(url) || CONTROL_CHARS.test(url)) return false;
  try {
    const u = new URL(url);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export function signOpenToken(key: TokenKey, messageId: string): string {
  return signPayload(key, TOKEN_KINDS.open, [checkMessageId(messageId)]);
}

export function verifyOpenToken(key: TokenKey, token: unknown): { messageId: string } | null {
  return messageOnly(verifyPayload(key, TOKEN_KINDS.open, token));
}

export function signUnsubscribeToken(key: TokenKey, messageId: string): string {
  return signPayload(key, TOKEN_KINDS.unsubscribe, [checkMessageId(messageId)]);
}

export function verifyUnsubscribeToken(key: TokenKey, token: unknown): { messageId: string } | null {
  return messageOnly(verifyPayload(key, TOKEN_KINDS.unsubscribe, token));
}

/** Throws TypeError for a URL that is not trackable (see isTrackableUrl). */
export function signClickToken(key: TokenKey, messageId: string, url: string): string {
  if (!isTrackableUrl(url)) throw new TypeError(`not an http(s) URL: ${url.slice(0, 100)}`);
  return signPayload(key, TOKEN_KINDS.click, [checkMessageId(messageId), url]);
}

/**
 * `url` is returned exactly as signed (what the email linked to, for the click event).
 * Redirect to `new URL(url).href`: it is the same address, encoded for a Location header.
 */
export function verifyClickToken(key: TokenKey, token: unknown): { messageId: string; url: string } | null {
  const fields = verifyPayload(key, TOKEN_KINDS.click, token);
  if (!fields || fields.length !== 2) return null;
  const [messageId, url] = fields;
  if (!MESSAGE_ID.test(messageId) || !isTrackableUrl(url)) return null;
  return { messageId, url };
}

function messageOnly(fields: string[] | null): { messageId: string } | null {
  if (!fields || fields.length !== 1 || !MESSAGE_ID.test(fields[0])) return null;
  return { messageId: fields[0] };
}

function checkMessageId(messageId: string): string {
  if (!MESSAGE_ID.test(messageId)) throw new TypeError(`not a message id: ${messageId}`);
  return messageId;
}
