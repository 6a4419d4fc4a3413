import type { PhraseFamily } from './phrase.js';

/** Our message is malformed or carries what the receiver refuses to take: sender side. */
export const contentError: PhraseFamily = {
  reason: 'content_error',
  phrases: [
    { re: /(?:message )?content (?:rejected|refused|not accepted|violat|(?:is )?not allowed)|(?:rejected|refused) (?:due to|because of) (?:its |the )?content|prohibited content/i, example: '554 5.6.0 Message content rejected' },
    { re: /attachment|file type|executable/i, example: '552 5.7.0 Our system detected an illegal attachment on your message.' },
    { re: /(?:header|headers) (?:\S+ )?(?:too (?:long|large|many)|invalid|missing|malformed|error|not rfc)|invalid (?:message|character|header)|duplicate (?:header|message-id)|missing (?:\S+ )?header|message (?:format|encoding|header)/i, example: '554 5.6.0 Message contains invalid header' },
    { re: /\bmalformed\b|line (?:is )?too long|\bmime\b|bare (?:lf|cr|linefeed|newline)|(?:not|non)[- ]compliant|rfc ?(?:5322|2822|822)/i, example: '550 5.6.0 Message is not RFC 5322 compliant' },
  ],
};
