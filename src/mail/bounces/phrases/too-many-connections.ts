import type { PhraseFamily } from './phrase.js';

/** Connection limits of the receiver: recipient side, retried (traffic shaping reads these). */
export const tooManyConnections: PhraseFamily = {
  reason: 'too_many_conn',
  phrases: [
    { re: /too many (?:concurrent |simultaneous |parallel |open )?(?:smtp )?(?:connections|sessions)|(?:concurrent|simultaneous) connections/i, example: '421 4.7.0 Too many concurrent SMTP connections from this IP address; please try again later' },
    { re: /connection (?:limit|count)|too many (?:hosts|clients)/i, example: '421 4.7.0 Connection limit exceeded for your network' },
  ],
};
