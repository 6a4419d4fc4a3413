import type { PhraseFamily } from './phrase.js';

/** The mailbox moved and no longer takes mail here: dead (551, 5.1.6). */
export const hasMoved: PhraseFamily = {
  reason: 'has_moved',
  phrases: [
    { re: /has moved|not local;? please try/i, example: '551 User not local; please try <new@example.net>' },
    { re: /no longer accepts? (?:e-?)?mail/i, example: 'This address no longer accepts mail. (#5.1.1)' },
    { re: /address (?:has )?changed|forward(?:ing)? address|new address is/i, example: "550 5.1.6 This person's address has changed; the new address is given in the text" },
  ],
};
