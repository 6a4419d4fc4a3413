import type { PhraseFamily } from './phrase.js';

/**
 * The account is suspended, disabled, inactive: a state its owner or provider can lift.
 * Soft the first time; repeated, it suppresses (docs/bounces.md, "suspended mailboxes").
 */
export const suspended: PhraseFamily = {
  reason: 'suspended',
  phrases: [
    { re: /(?:account|mailbox|user|address|recipient)(?: \S+){0,5}? (?:has been |is |was )?(?:temporarily |currently )?(?:disabled|suspended|deactivated|inactive|frozen|locked|blocked for inactivity|on hold|not active)/i, example: '550 5.2.1 The email account that you tried to reach is disabled.' },
    { re: /(?:disabled|suspended|inactive|deactivated|frozen|locked) (?:account|mailbox|user)/i, example: '550 5.2.1 <rcpt@example.org>: this is a deactivated mailbox' },
    { re: /(?<!delivery )temporarily (?:disabled|suspended)|unavailable due to inactivity|disabled or discontinued/i, example: '554 delivery error: dd Sorry your message to rcpt@example.org cannot be delivered. This account has been disabled or discontinued [#102].' },
    { re: /利用停止|一時停止/, example: '550 このアカウントは現在利用停止中です' },
  ],
};
