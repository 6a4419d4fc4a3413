import type { PhraseFamily } from './phrase.js';

/** Our IP, host or domain is refused (block lists, reputation, reverse DNS): sender side. */
export const blocked: PhraseFamily = {
  reason: 'blocked',
  phrases: [
    { re: /block ?list|black ?list|\bdeny ?list/i, example: "550 5.7.1 Your IP 203.0.113.5 is on our block list" },
    { re: /blocked using|(?<!not )listed (?:at|in|on|by)\b(?! (?:the )?(?:domino|public name|address book|directory))/i, example: '554 5.7.1 Service unavailable; Client host [203.0.113.5] blocked using zen.spamhaus.org' },
    { re: /\bspamhaus\b|\bspamcop\b|\bsorbs\b|\bbarracuda(?:central)? (?:reputation|rbl)|\brbl\b|\bdnsbl\b/i, example: "553 5.7.1 [BL21] Connections will not be accepted from 203.0.113.5, because the ip is in Spamhaus's list" },
    { re: /reputation/i, example: '550 5.7.1 Message rejected due to the poor reputation of the sending IP address' },
    { re: /client host (?:\[[^\]]*\] )?(?:is )?(?:rejected|blocked)/i, example: '554 5.7.1 Client host [203.0.113.5] rejected: Access denied' },
    { re: /your (?:sending )?ip\b|sending ip|\bip (?:address )?(?:was )?rejected/i, example: '554 5.7.1 Your sending IP has been temporarily rejected' },
    { re: /(?:ip|host|server|sender|domain|connection|address) (?:address )?(?:has been |is |was )?(?:temporarily |permanently )?(?:blocked|banned|blacklisted)(?! by (?:the )?(?:recipient|user|addressee))|\b(?:blocked|banned) (?:ip|host|sender|domain)/i, example: '550 5.7.1 Your sending domain has been blocked for abuse' },
    { re: /reverse (?:dns|lookup)|\brdns\b|\bptr\b|no (?:ptr|reverse)|(?:not|cannot|can't) (?:be )?resolve(?:d)? (?:your|the) (?:ip|address|host)/i, example: '550 5.7.25 The IP address sending this message does not have a PTR record setup' },
    { re: /dynamic (?:ip|pool|address)|residential/i, example: '550 5.7.1 Mail from dynamic IP addresses is not accepted, use your provider\'s relay' },
    { re: /unusual rate of unsolicited/i, example: '550 5.7.1 [203.0.113.5] Our system has detected an unusual rate of unsolicited mail originating from your IP address.' },
    { re: /part of their network is on our block|messages from \S+ weren't sent/i, example: "550 SC-001 (BAY004-MC1F15) Unfortunately, messages from 203.0.113.5 weren't sent. Please contact your Internet service provider since part of their network is on our block list." },
    { re: /refused to talk to me|connection (?:refused|rejected) (?:by|due)/i, example: '554 mx.example.org refused to talk to me: 554 Connection rejected due to policy' },
    { re: /temporarily deferred due to (?:unexpected volume|user complaints)/i, example: '421 4.7.0 [TSS04] Messages from 203.0.113.5 temporarily deferred due to unexpected volume or user complaints' },
    { re: /access denied[,.]? (?:banned|blocked)|(?:traffic |mail |connections? )?(?:not accepted|rejected|refused|blocked) from (?:this|your) (?:ip|server|network)|hostile|envelope blocked/i, example: '550 5.7.708 Service unavailable. Access denied, traffic not accepted from this IP.' },
    { re: /not accepted from your (?:server|host|ip)/i, example: '550 5.1.1 Mail not accepted from your server, contact the postmaster' },
  ],
};
