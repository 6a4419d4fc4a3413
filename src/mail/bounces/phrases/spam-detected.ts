import type { PhraseFamily } from './phrase.js';

/** The message was judged spam or phishing: sender side (our content). */
export const spamDetected: PhraseFamily = {
  reason: 'spam_detected',
  phrases: [
    { re: /\bspam\b|spam(?:my|like)/i, example: '554 5.7.1 Message rejected as spam by Content Filtering' },
    { re: /\bjunk\b|unsolicited|\buce\b|bulk (?:e-?mail|mail)/i, example: '550 5.7.1 Our system has detected that this message is likely unsolicited mail.' },
    { re: /content filter/i, example: '550 5.7.1 Rejected by content filter: message looks like advertising' },
    { re: /phish|suspicious (?:content|message|url|link)/i, example: '554 5.7.1 Message rejected: suspicious URL found in message body' },
    { re: /scor(?:e|ed) (?:too high|above)|high (?:spam )?score/i, example: '550 5.0.0 Message scored too high on our filters (8.3 > 5.0)' },
  ],
};
