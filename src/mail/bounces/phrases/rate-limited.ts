import type { PhraseFamily } from './phrase.js';

/** Throttling and greylisting: recipient side, retried (traffic shaping reads these). */
export const rateLimited: PhraseFamily = {
  reason: 'rate_limited',
  phrases: [
    { re: /rate[- ]?limit|throttl|slow down/i, example: '451 4.7.1 Rate limit exceeded, slow down' },
    { re: /too many (?:messages|mails|emails|requests|errors|commands|recipients this session)|(?:sending|receiving|message|mail) (?:mail )?(?:at a )?rate/i, example: '450 4.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered' },
    { re: /gr[ae]ylist/i, example: '451 4.7.1 Greylisted, please try again in 300 seconds' },
    { re: /try (?:again )?later|(?:limit|quota) (?:of )?(?:messages|mails|emails)|exceeded (?:the )?(?:hourly|daily|sending|message) (?:limit|quota)|deferred due to/i, example: '450 4.7.1 Hourly message limit reached, try later' },
  ],
};
