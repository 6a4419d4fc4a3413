import type { PhraseFamily } from './phrase.js';

/** The SMTP conversation broke: sender side (our client's commands). */
export const syntaxError: PhraseFamily = {
  reason: 'syntax_error',
  phrases: [
    { re: /syntax/i, example: '501 5.5.4 Syntax error in parameters or arguments' },
    { re: /(?:command|parameter)s? (?:not )?(?:unrecognized|recognized|implemented)|unrecognized command|invalid (?:command|argument|parameter)|bad sequence|not implemented/i, example: '503 5.5.1 Bad sequence of commands' },
  ],
};
