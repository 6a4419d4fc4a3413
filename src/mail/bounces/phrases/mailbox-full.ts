import type { PhraseFamily } from './phrase.js';

/** Over quota: the mailbox exists and will take mail once emptied. Recipient side, soft. */
export const mailboxFull: PhraseFamily = {
  reason: 'mailbox_full',
  phrases: [
    { re: /mail ?(?:box|folder|drop)(?: is| has)? (?:full|over (?:quota|capacity)|size limit exceeded)|(?:inbox|box) (?:is )?full|full mailbox/i, example: '552 5.2.2 Mailbox size limit exceeded' },
    { re: /over ?quota|quota (?:has been |was |is )?(?:exceeded|full|reached|violation)|exceed(?:ed|s)? (?:\S+ ){0,2}(?:quota|storage allocation|storage limit|disk quota)/i, example: '552 5.2.2 <rcpt@example.org>: user is over quota' },
    { re: /insufficient (?:storage|disk) space (?:for|in) (?:the )?(?:user|mailbox|recipient)|mailbox (?:size|storage) limit|not enough (?:storage|space) (?:in|for)|storage (?:space )?(?:is )?full/i, example: '452 4.2.2 Insufficient disk space for the user, try again later' },
    { re: /user(?:'s)? (?:is )?(?:over|exceeded)|account is full|recipient(?:'s)? (?:mailbox|inbox) is (?:full|out)|too many messages in (?:the|this) (?:mail)?box|maildir (?:over|full)/i, example: "550 5.2.2 The recipient's mailbox is full and can't accept messages now" },
    { re: /boîte (?:aux lettres |mail )?pleine|postfach (?:ist )?voll|ящик переполнен|容量(?:が|を)?(?:超|オーバー|一杯)|メールボックスがいっぱい/i, example: '552 Postfach ist voll (Quota überschritten)' },
  ],
};
