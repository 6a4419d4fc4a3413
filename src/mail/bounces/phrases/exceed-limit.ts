import type { PhraseFamily } from './phrase.js';

/** A recipient limit of the receiving side: recipient side, soft. */
export const exceedLimit: PhraseFamily = {
  reason: 'exceed_limit',
  phrases: [
    { re: /too many recipients|recipient limit/i, example: '452 4.5.3 Too many recipients' },
    { re: /exceed(?:s|ed)? (?:the )?(?:recipient|maximum number of recipients)|limit (?:of|on) recipients/i, example: '550 5.5.3 Message exceeds the maximum number of recipients per message' },
    { re: /daily (?:receiving|incoming) (?:limit|quota)|receiving limit/i, example: '550 5.2.3 The recipient has exceeded its daily receiving limit' },
  ],
};
