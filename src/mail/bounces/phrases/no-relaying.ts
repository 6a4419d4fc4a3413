import type { PhraseFamily } from './phrase.js';

/** The server does not relay for that domain (a wrong MX, a misconfigured smarthost): sender side. */
export const noRelaying: PhraseFamily = {
  reason: 'no_relaying',
  phrases: [
    { re: /relay(?:ing)? (?:access )?(?:denied|not (?:permitted|allowed|authorized)|prohibited|refused)/i, example: '554 5.7.1 <rcpt@example.org>: Relay access denied' },
    { re: /(?:unable|not permitted|not allowed|cannot|we do not|not authorized) to relay|\bno relaying\b|\bdo(?:es)? not relay|relay (?:access )?(?:is )?not/i, example: '550 5.7.1 Unable to relay for rcpt@example.org' },
    { re: /relaying (?:mail )?(?:to .{0,80}?)?(?:is )?not allowed|not a gateway|open relay/i, example: '550 relaying to <rcpt@example.org> is not allowed' },
    { re: /rcpthosts|not (?:a )?local (?:domain|recipient)|isn't in my control\/locals file/i, example: "553 sorry, that domain isn't in my list of allowed rcpthosts (#5.7.1)" },
  ],
};
