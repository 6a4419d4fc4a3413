import type { PhraseFamily } from './phrase.js';

/** The recipient's domain does not exist or has no mail host: dead. */
export const hostUnknown: PhraseFamily = {
  reason: 'host_unknown',
  phrases: [
    { re: /host (?:or domain name )?(?:unknown|not found)(?!, try again)|unknown host/i, example: '550 5.1.2 Host unknown (Name server: mx.nowhere.example: host not found)' },
    { re: /domain (?:name )?(?:not found|does not exist|doesn't exist|unknown|is not valid|not valid)|unknown domain|invalid domain|no such (?:domain|host)/i, example: '550 5.1.2 <rcpt@example.org>: Recipient address rejected: Domain not found' },
    { re: /unrout(?:e)?able/i, example: 'Unrouteable address' },
    { re: /domain \S* ?(?:couldn't|could not|cannot|can't) be found|name or service not known|nxdomain|does not exist in dns|(?:couldn't|could not|can't) find any host named|(?:couldn't|could not) find a mail exchanger|no mail server|non-?existent (?:hosts?|domain)/i, example: "Sorry, I couldn't find any host named example.org. (#5.1.2)" },
    { re: /domain name in the (?:e-?mail )?address is incorrect|no (?:valid )?route to (?:the )?(?:domain|destination)|unable to resolve|address resolution of \S* ?failed/i, example: 'DNS Error: Address resolution of typo.example. failed: Domain name not found' },
  ],
};
