/**
 * The phrase tables, one file per family, in the order they are tried (first match wins,
 * see ../classify.ts). The order is the policy: refusals of *us* first, because a text that
 * says "blocked", "policy", "spam", "DMARC" or "filtered" is about the sender even when the
 * receiver put 5.1.1 in front of it; then the recipient-side states that are not an
 * address's death (full, too big, suspended, expired after retries); then the dead families;
 * then the temporary ones.
 */
import { authFailure } from './auth-failure.js';
import { blocked } from './blocked.js';
import { contentError } from './content-error.js';
import { exceedLimit } from './exceed-limit.js';
import { expired } from './expired.js';
import { filtered } from './filtered.js';
import { hasMoved } from './has-moved.js';
import { hostUnknown } from './host-unknown.js';
import { mailboxFull } from './mailbox-full.js';
import { mailerError } from './mailer-error.js';
import { messageTooBig } from './message-too-big.js';
import { networkError } from './network-error.js';
import { noRelaying } from './no-relaying.js';
import { notAccepting } from './not-accepting.js';
import type { PhraseFamily } from './phrase.js';
import { policy } from './policy.js';
import { rateLimited } from './rate-limited.js';
import { rejectedSender } from './rejected-sender.js';
import { securityError } from './security-error.js';
import { spamDetected } from './spam-detected.js';
import { suspended } from './suspended.js';
import { syntaxError } from './syntax-error.js';
import { systemError } from './system-error.js';
import { systemFull } from './system-full.js';
import { tooManyConnections } from './too-many-connections.js';
import { userUnknown } from './user-unknown.js';

export { DIALECT_TOKENS } from './dialects.js';
export type { DialectToken, Phrase, PhraseFamily } from './phrase.js';

export const PHRASE_FAMILIES: readonly PhraseFamily[] = [
  // The sender's side.
  authFailure, blocked, spamDetected, noRelaying, rejectedSender, securityError, filtered, policy, contentError,
  // The recipient's side, alive — except has_moved and not_accept, which go ahead of
  // suspended: "mailbox disabled, not accepting messages" is disabled for everyone, not for a while.
  mailboxFull, messageTooBig, exceedLimit, systemFull, hasMoved, notAccepting, suspended, mailerError, expired,
  // Gone.
  hostUnknown, userUnknown,
  // Temporary.
  tooManyConnections, rateLimited, networkError, systemError, syntaxError,
];
