import type { PhraseFamily } from './phrase.js';

/**
 * The recipient's mailbox exists but its filter or owner refused *this* sender or message
 * ("disabled for this sender", "rejected by recipient's filter"). Not a dead address; sender
 * side, since what was refused is us.
 */
export const filtered: PhraseFamily = {
  reason: 'filtered',
  phrases: [
    { re: /filter/i, example: '550 5.7.1 Recipient address rejected: the recipient has a filter that rejects your message' },
    { re: /(?:disabled|blocked|closed|not available) for (?:this|the|your) (?:sender|address|domain)|for this sender/i, example: '550 5.2.1 <rcpt@example.org>: Mailbox disabled for this sender' },
    { re: /(?:rejected|refused|blocked|declined) by (?:the )?(?:recipient|user|addressee|mailbox owner)(?!'?s? (?:domain|server|system|mail|e-?mail|security)\b)|(?:recipient|user) has (?:rejected|refused|blocked|declined)/i, example: "550 5.7.1 Message rejected by recipient's mailbox settings" },
    { re: /(?:does not|doesn't) (?:wish|want) to receive|chosen not to receive|only accepts mail from|not accepting (?:messages|mail) from|(?:does not|doesn't) accept (?:e-?)?mail from|(?:sender|you) (?:is |are )?not (?:on|in) (?:the )?(?:recipient's )?(?:allow|white|safe)/i, example: '550 5.7.1 This recipient only accepts mail from approved senders' },
  ],
};
