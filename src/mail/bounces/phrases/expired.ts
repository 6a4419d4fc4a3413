import type { PhraseFamily } from './phrase.js';

/**
 * A queue gave up after retrying (the remote MTA's, or ours): whatever the last error was,
 * it was temporary. Recipient side, soft; checked before the dead families so that "gave up
 * after 5 days … user unknown (450)" is not read as a dead address.
 */
export const expired: PhraseFamily = {
  reason: 'expired',
  phrases: [
    { re: /\bexpired\b(?! (?:account|mailbox|user))/i, example: '554 5.4.7 Delivery expired (message too old) [Timeout]' },
    { re: /retry time(?:out)? (?:not reached|exceeded)|time ?out(?:s)? (?:was )?exceeded/i, example: 'retry timeout exceeded' },
    { re: /(?:too long|too old|too many days) (?:in|on) (?:the )?queue|in the queue too long|maximum (?:queue )?(?:lifetime|time)/i, example: "I'm not going to try again; this message has been in the queue too long." },
    { re: /could not be delivered (?:with)?in \d+|could not be delivered for \d+ (?:hours|days)|gave up|unable to deliver (?:in|within)|(?:after|for (?:more than|over)) \d+ (?:hours|days)/i, example: 'Message could not be delivered within 5 days: giving up. Delivery attempts gave up after 120 hours' },
  ],
};
