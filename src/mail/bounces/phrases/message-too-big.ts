import type { PhraseFamily } from './phrase.js';

/** The message is larger than the receiver takes: recipient side, soft (a smaller one would pass). */
export const messageTooBig: PhraseFamily = {
  reason: 'mesg_too_big',
  phrases: [
    { re: /(?:message|mail|e-?mail|data) (?:is )?too (?:large|big|long)/i, example: '552 5.3.4 Message is too large for this system' },
    { re: /(?:message|mail|e-?mail) (?:file )?size (?:\S+ )?(?:exceeds|is (?:over|larger|bigger|greater)|too)|exceeds? (?:the )?(?:fixed |maximum |max(?:imum)? (?:allowed |permitted )?)?(?:message )?size/i, example: '552 5.3.4 Message size exceeds fixed maximum message size' },
    { re: /size (?:limit )?exceeded|message length exceeds|exceeded (?:the )?(?:maximum |max )?(?:message )?size|larger than (?:the )?(?:maximum|allowed)|size (?:limit|exceeds)/i, example: '552 5.3.4 Message size limit exceeded' },
  ],
};
