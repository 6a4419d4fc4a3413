import type { PhraseFamily } from './phrase.js';

/** A local policy refused the message (anti-spoofing, administrative prohibition): sender side. */
export const policy: PhraseFamily = {
  reason: 'policy_violation',
  phrases: [
    { re: /polic(?:y|ies)/i, example: '550 Rejected by header based Anti-Spoofing policy: hello@example.com' },
    { re: /administrative(?:ly)? prohibit|prohibited/i, example: '550 Administrative prohibition' },
    { re: /delivery not authori[sz]ed|not (?:authori[sz]ed|permitted|allowed) (?:to|by|for|in)\b/i, example: '550 5.7.1 Delivery not authorized, message refused' },
    { re: /refused by (?:the )?(?:local|site)|\brestricted\b|\bforbidden\b|compliance/i, example: '550 5.7.1 Message refused by local rules: external mail to this list is restricted' },
    { re: /access denied|denied by/i, example: '550 5.7.1 Access denied' },
  ],
};
