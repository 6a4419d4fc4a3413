/**
 * The per-minute token bucket of a destination (its messagesPerMinute), shared by every worker
 * through PostgreSQL (db/queries/shaping.ts): how it is sized, how long a granted token lives,
 * and how often and how far ahead a gate (./gate.ts) asks it for tokens.
 */
import type { ProviderPolicy } from '../delivery-policy.js';

/** Token grants are spent at once; this long unspent, they are dropped (a sliding minute stays within its limit). */
export const TOKEN_LIFETIME_MS = 1_000;
/**
 * A gate short of tokens asks the shared bucket again after this long at least (or when the
 * next token is due, if later): a batch of the rate, not a token per call.
 */
export const TOKEN_ASK_MS = 100;
/** Tokens are asked for ahead of the waiting messages, for those on their way, up to this long of the rate (well within TOKEN_LIFETIME_MS). */
export const TOKEN_AHEAD_MS = 250;
/** The bucket holds this many seconds of the rate. */
const BURST_SECONDS = 2;

/**
 * The rate a bucket is refilled at, so that any sliding 60 seconds holds at most
 * `messagesPerMinute`: a full bucket (burst) plus the refill over 60 s plus the lifetime of a
 * granted token (and a second's margin for the send to follow it) stays within the limit.
 */
export function bucketOf(p: Pick<ProviderPolicy, 'messagesPerMinute'>): { rate: number | null; burst: number } {
  const n = p.messagesPerMinute;
  if (n === null) return { rate: null, burst: 0 };
  const burst = Math.max(1, Math.floor((n * BURST_SECONDS) / 60));
  // One second more than the token's lifetime: a send may trail its token by a connection set-up.
  return { rate: Math.max(n - burst, 1) / (60 + TOKEN_LIFETIME_MS / 1000 + 1), burst };
}
