import type { PhraseFamily } from './phrase.js';

/** Our envelope sender (or its domain, or its form) was refused: sender side, reason `rejected`. */
export const rejectedSender: PhraseFamily = {
  reason: 'rejected',
  phrases: [
    { re: /sender (?:address )?(?:was |is |has been )?(?:rejected|refused|denied|blocked|invalid|not allowed|unknown)(?! by (?:the )?(?:recipient|user|addressee))|\bbad sender\b/i, example: '553 5.1.8 <bounces@example.com>: Sender address rejected: Domain not found' },
    { re: /sender verif(?:y|ication) (?:failed|is required)/i, example: '550 5.1.0 Sender verify failed' },
    { re: /(?:domain of )?sender(?:'s)? (?:address |domain )?(?:does not exist|must exist|not found|is not valid|unresolvable)|sender domain/i, example: '501 5.1.8 Domain of sender address does not exist' },
    { re: /(?:mail from|envelope[- ]sender|return[- ]path)(?: address)? (?:is |was )?(?:rejected|invalid|not|refused|denied|unverifiable)/i, example: '550 5.7.1 MAIL FROM address rejected by recipient domain policy' },
    { re: /smtputf8|(?:non-?ascii|utf-?8|8-?bit|international(?:ized)?) (?:address|local[- ]part|mailbox|characters? in (?:the )?address)|address (?:contains|has) (?:non-?ascii|8-?bit|illegal)/i, example: '553 5.6.7 SMTPUTF8 is required, but was not offered by the client' },
    { re: /(?:don't|do not|does not) have permission to (?:post|send)|not (?:allowed|permitted|authori[sz]ed) to (?:post|send)(?! from)|may not exist, or you may not have permission|you are not (?:allowed|permitted|authori[sz]ed)|moderator/i, example: "Google Groups: You don't have permission to post to this group." },
    { re: /invalid dns (?:mx|a)\b|null mx .*sender|sender .*null mx/i, example: '550-Requested action not taken: mailbox unavailable 550 invalid DNS MX or A/AAAA resource record' },
  ],
};
