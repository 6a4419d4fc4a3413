import type { PhraseFamily } from './phrase.js';

/**
 * The domain or the mailbox accepts no mail from anyone: null MX (RFC 7505), "does not accept
 * mail", a mailbox disabled for every sender. Dead.
 */
export const notAccepting: PhraseFamily = {
  reason: 'not_accept',
  phrases: [
    { re: /(?:does not|doesn't|do not|don't|will not) accept (?:any )?(?:e-?)?mail(?! from)|accepts no (?:e-?)?mail/i, example: '556 5.1.10 Recipient address rejected: Domain example.org does not accept mail (nullMX)' },
    { re: /indicated no smtp service/i, example: 'an MX or SRV record indicated no SMTP service' },
    { re: /null ?mx/i, example: '556 5.1.10 <rcpt@example.org>: Recipient address has null MX' },
    { re: /not accepting (?:any )?(?:e-?)?(?:mail|messages)(?! from)/i, example: '550 5.2.1 <rcpt@example.org>: Mailbox disabled, not accepting messages' },
  ],
};
