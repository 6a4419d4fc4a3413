import type { PhraseFamily } from './phrase.js';

/**
 * The mailbox does not exist (or no longer does): dead. Includes closed and deleted
 * accounts. Generic refusals that servers also put in front of blocks and policies
 * ("mailbox unavailable", "address rejected") are weak: they decide only when the status
 * says nothing.
 */
export const userUnknown: PhraseFamily = {
  reason: 'user_unknown',
  phrases: [
    { re: /(?:user|recipient|addressee|mailbox|account|address|e-?mail address|e-?mail account|destination)(?: name)? (?:is )?(?:unknown|not found|not known|invalid)/i, example: '550 5.1.1 <rcpt@example.org>: Recipient address rejected: User unknown in local recipient table' },
    { re: /unknown (?:user|recipient|mailbox|account|local[- ]part|address|e-?mail)|invalid (?:recipient|mailbox|user|address|e-?mail address|account)/i, example: '550 Invalid recipient: <rcpt@example.org>' },
    { re: /no such (?:user|recipient|mailbox|account|address|person|local user|e-?mail)|no mailbox here|no account by that name/i, example: 'Sorry, no mailbox here by that name. (#5.1.1)' },
    { re: /(?:user|mailbox|account|address|recipient)s? (?:\S+ ){0,2}(?:does not|doesn't|did not|not) exist|(?:does not|doesn't) exist/i, example: "550 5.1.1 The email account that you tried to reach does not exist. Please try double-checking the recipient's email address for typos" },
    { re: /not (?:a )?(?:valid|known) (?:user|recipient|mailbox|address|account)|(?:no|not a) (?:valid )?(?:mailbox|user|recipient)\b|bad destination mailbox/i, example: '550 5.1.1 <rcpt@example.org>... not a valid user' },
    { re: /not listed in (?:the )?(?:domino directory|public name|address book|directory)|user (?:\S+ )?not listed/i, example: 'User kijitora (rcpt@example.org) not listed in Domino Directory' },
    { re: /(?:couldn't|could not|cannot|can't) be found|(?:unable to|can't|cannot) (?:find|locate) (?:the )?(?:user|recipient|mailbox)/i, example: "550 5.1.1 The email address you entered couldn't be found." },
    { re: /(?:doesn't|does not) have an? (?:\S+ )?account|not our customer|user (?:not )?(?:in|on) (?:this|the) (?:server|system|domain)/i, example: "554 delivery error: dd This user doesn't have a yahoo.com account (rcpt@example.org) [0]" },
    { re: /(?:account|mailbox|address) (?:has been |was )?(?:closed|deleted|removed|terminated|cancell?ed)|(?:closed|deleted|terminated) (?:account|mailbox)/i, example: '550 5.1.1 <rcpt@example.org>: the account has been closed' },
    { re: /recipient (?:address )?rejected: (?:undeliverable|unverified) address|address (?:lookup )?failed/i, example: '550 5.1.1 <rcpt@example.org>: Recipient address rejected: undeliverable address: host mx.example.org said: 550 No such user' },
    { re: /nicht (?:vorhanden|gefunden|bekannt)|n'existe pas|introuvable|inconnu|не существует|нет такого/i, example: "550 5.1.1 Adresse d'au moins un destinataire invalide: utilisateur inconnu" },
    { re: /存在しない|存在しません|見つかりません|宛先不明|宛先が(?:見つから|不明)|該当(?:する)?ユーザ/, example: '550 指定されたメールアドレスは存在しません' },
    { re: /mailbox (?:is )?unavailable|(?:user|recipient) (?:is )?unavailable|mailbox not available/i, example: '550 Requested action not taken: mailbox unavailable', weak: true },
    { re: /(?:recipient )?address rejected|rejected recipient|recipient (?:was )?rejected|recipient not accepted|undeliverable address/i, example: '550 <rcpt@example.org>: Recipient address rejected', weak: true },
  ],
};
