import type { PhraseFamily } from './phrase.js';

/** Our SPF, DKIM or DMARC failed, or the receiver wants authenticated mail: sender side. */
export const authFailure: PhraseFamily = {
  reason: 'auth_failure',
  phrases: [
    { re: /\bdmarc\b/i, example: "550 5.7.1 Unauthenticated email from example.com is not accepted due to domain's DMARC policy" },
    { re: /\bspf\b|sender policy framework/i, example: '550 5.7.23 The message was rejected because of Sender Policy Framework violation' },
    { re: /\bdkim\b|domainkeys/i, example: '550 5.7.20 No passing DKIM signature found' },
    { re: /(?:is|message|mail|email|sender) (?:is )?unauthenticated|unauthenticated (?:e-?mail|message|sender)/i, example: '550-5.7.26 This mail has been blocked because the sender is unauthenticated.' },
    { re: /authentication (?:check )?fail|failed (?:the )?authentication|does not pass (?:sender )?authentication|sender authentication|\bnot authenticate/i, example: '550 5.7.26 Message rejected: sender authentication checks failed' },
  ],
};
