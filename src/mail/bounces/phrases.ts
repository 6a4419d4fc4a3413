import type { BounceReason } from './reasons.js';

/**
 * Providers' wording, reason by reason. Checked in this order, first match wins, on the
 * diagnostic text with addresses, host names and URLs blanked out (a host called
 * `relay.example.net` or a mailbox called `spam@…` must not decide anything). The order
 * puts the sender-side reasons first: "Sender address rejected: Domain not found" is about
 * our domain, not the recipient's, and "blocked using zen.spamhaus.org" is about our IP even
 * when the receiver put 5.1.1 in front of it.
 *
 * Sources: the published bounce texts of Postfix, Exim, Sendmail, qmail, Courier, Exchange /
 * Office 365, Gmail, Yahoo, Outlook.com, iCloud, Mimecast, MessageLabs, Barracuda, mail.ru,
 * Yandex, GMX/web.de, Orange, Zoho, Domino, GroupWise, MDaemon, Kerio and the RFC 3463 texts.
 */

/** Vendor status tokens, matched on the raw text before host names are blanked (they contain dots). */
export const TOKEN_PHRASES: readonly [BounceReason, RegExp][] = [
  ['user_unknown', /RESOLVER\.ADR\.Recip(?:ient)?NotFound|RESOLVER\.ADR\.ExRecipNotFound|RESOLVER\.ADR\.InvalidInSmtp|\bRecipientNotFound\b|\bRecipNotFound\b/i],
  ['security_error', /RESOLVER\.RST\.(?:AuthRequired|NotAuthorized|SendSizeLimit)|RESOLVER\.ADR\.RecipLimit/i],
  ['mailbox_full', /STOREDRV\.Deliver\.Exception:QuotaExceeded|\bQuotaExceededException\b/i],
  ['filtered', /RESOLVER\.RST\.RecipSizeLimit/i],
  ['blocked', /\bS3150\b|\bSC-00[1-4]\b|\bRP-00[1-3]\b|\bDY-00[1-2]\b|\bOU-00[1-2]\b/],
  ['spam_detected', /\bSPM-\d{3}\b|\bHS-\d{3}\b/],
  ['content_error', /STOREDRV\.Submission\.Exception|\bWASCL\b/i],
];

export const REASON_PHRASES: readonly [BounceReason, RegExp][] = [
  ['auth_failure', new RegExp([
    String.raw`\bdmarc\b`, String.raw`\bspf\b`, String.raw`\bdkim\b`, String.raw`sender policy framework`,
    String.raw`(?:is|message|mail|email|sender) (?:is )?unauthenticated`, String.raw`unauthenticated (?:e-?mail|message|sender)`,
    String.raw`authentication (?:check )?fail`, String.raw`failed (?:the )?authentication`, String.raw`does not pass (?:sender )?authentication`,
    String.raw`domainkeys`, String.raw`\bnot authenticate`, String.raw`sender authentication`,
  ].join('|'), 'i')],
  ['blocked', new RegExp([
    String.raw`block ?list`, String.raw`black ?list`, String.raw`\bdeny ?list`, String.raw`blocked using`, String.raw`(?<!not )listed (?:at|in|on|by)\b(?! (?:the )?(?:domino|public name|address book|directory))`,
    String.raw`\bspamhaus\b`, String.raw`\bspamcop\b`, String.raw`\bsorbs\b`, String.raw`\bbarracuda(?:central)? (?:reputation|rbl)`, String.raw`\brbl\b`, String.raw`\bdnsbl\b`,
    String.raw`reputation`, String.raw`client host (?:\[[^\]]*\] )?(?:is )?(?:rejected|blocked)`, String.raw`your (?:sending )?ip\b`, String.raw`sending ip`,
    String.raw`(?:ip|host|server|sender|domain|connection|address) (?:address )?(?:has been |is |was )?(?:temporarily |permanently )?(?:blocked|banned|blacklisted)`,
    String.raw`\b(?:blocked|banned) (?:ip|host|sender|domain)`, String.raw`reverse (?:dns|lookup)`, String.raw`\brdns\b`, String.raw`\bptr\b`,
    String.raw`no (?:ptr|reverse)`, String.raw`(?:not|cannot|can't) (?:be )?resolve(?:d)? (?:your|the) (?:ip|address|host)`, String.raw`dynamic (?:ip|pool|address)`,
    String.raw`residential`, String.raw`unusual rate of unsolicited`, String.raw`poor (?:sender )?reputation`, String.raw`\bip (?:address )?(?:was )?rejected`,
    String.raw`part of their network is on our block`, String.raw`refused to talk to me`, String.raw`connection (?:refused|rejected) (?:by|due)`,
    String.raw`messages from \S+ weren't sent`, String.raw`temporarily deferred due to (?:unexpected volume|user complaints)`,
    String.raw`access denied[,.]? (?:banned|blocked)`, String.raw`(?:traffic |mail |connections? )?(?:not accepted|rejected|refused|blocked) from (?:this|your) (?:ip|server|network)`, String.raw`hostile`, String.raw`bad reputation`, String.raw`envelope blocked`,
  ].join('|'), 'i')],
  ['spam_detected', new RegExp([
    String.raw`\bspam\b`, String.raw`spam(?:my|like)`, String.raw`\bjunk\b`, String.raw`unsolicited`, String.raw`\buce\b`, String.raw`bulk (?:e-?mail|mail)`,
    String.raw`content filter`, String.raw`message (?:content )?(?:was )?(?:rejected|refused) (?:as|because|due to) (?:spam|suspicious)`, String.raw`phish`,
    String.raw`suspicious (?:content|message|url|link)`, String.raw`scor(?:e|ed) (?:too high|above)`, String.raw`high (?:spam )?score`,
  ].join('|'), 'i')],
  ['no_relaying', new RegExp([
    String.raw`relay(?:ing)? (?:access )?(?:denied|not (?:permitted|allowed|authorized)|prohibited|refused)`, String.raw`(?:unable|not permitted|not allowed|cannot|we do not|not authorized) to relay`,
    String.raw`\bno relaying\b`, String.raw`relaying (?:mail )?(?:to [^ ]+ )?(?:is )?not allowed`, String.raw`not a gateway`, String.raw`open relay`, String.raw`relay (?:access )?(?:is )?not`,
    String.raw`\bdo(?:es)? not relay`, String.raw`rcpthosts`, String.raw`not (?:a )?local (?:domain|recipient)`,
  ].join('|'), 'i')],
  ['rejected', new RegExp([
    String.raw`sender (?:address )?(?:was |is )?(?:rejected|refused|denied|blocked|invalid|not allowed|unknown)`, String.raw`sender verif(?:y|ication) (?:failed|is required)`,
    String.raw`(?:domain of )?sender(?:'s)? (?:address |domain )?(?:does not exist|must exist|not found|is not valid|unresolvable)`, String.raw`sender domain`,
    String.raw`(?:mail from|envelope[- ]sender|return[- ]path)(?: address)? (?:is |was )?(?:rejected|invalid|not|refused|denied|unverifiable)`, String.raw`\bbad sender\b`,
    String.raw`smtputf8`, String.raw`(?:non-?ascii|utf-?8|8-?bit|international(?:ized)?) (?:address|local[- ]part|mailbox|characters? in (?:the )?address)`, String.raw`address (?:contains|has) (?:non-?ascii|8-?bit|illegal)`,
    String.raw`(?:don't|do not|does not) have permission to (?:post|send)`, String.raw`not (?:allowed|permitted|authori[sz]ed) to (?:post|send)(?! from)`, String.raw`may not exist, or you may not have permission`,
    String.raw`you are not (?:allowed|permitted|authori[sz]ed)`, String.raw`invalid dns (?:mx|a)\b`, String.raw`moderator`, String.raw`null mx .*sender|sender .*null mx`,
  ].join('|'), 'i')],
  ['security_error', new RegExp([
    String.raw`authentication (?:is )?required`, String.raw`must (?:issue a |use |be )?(?:starttls|authenticated|tls)`, String.raw`(?:starttls|tls|encryption|secure connection) (?:is )?(?:required|needed|mandatory)`,
    String.raw`must use tls`, String.raw`requires? (?:a )?(?:secure|encrypted|tls)`, String.raw`certificate`, String.raw`\bvirus\b`, String.raw`malware`, String.raw`infected`, String.raw`trojan`,
    String.raw`\bnot authori[sz]ed to send\b`, String.raw`security polic(?:y|ies)`, String.raw`security (?:issue|risk|threat)`, String.raw`authenticat(?:e|ion) (?:first|needed)`, String.raw`insecure`,
  ].join('|'), 'i')],
  ['mailbox_full', new RegExp([
    String.raw`mail ?(?:box|folder|drop)(?: is| has)? (?:full|over (?:quota|capacity)|size limit exceeded)`, String.raw`(?:inbox|box) (?:is )?full`, String.raw`full mailbox`,
    String.raw`over ?quota`, String.raw`quota (?:has been |was |is )?(?:exceeded|full|reached|violation)`, String.raw`exceed(?:ed|s)? (?:\S+ ){0,2}(?:quota|storage allocation|storage limit|disk quota)`,
    String.raw`out of (?:storage|disk) space`, String.raw`insufficient (?:storage|disk) space (?:for|in) (?:the )?(?:user|mailbox|recipient)`, String.raw`mailbox (?:size|storage) limit`,
    String.raw`user(?:'s)? (?:is )?(?:over|exceeded)`, String.raw`not enough (?:storage|space) (?:in|for)`, String.raw`storage (?:space )?(?:is )?full`, String.raw`account is full`,
    String.raw`recipient(?:'s)? (?:mailbox|inbox) is (?:full|out)`, String.raw`too many messages in (?:the|this) (?:mail)?box`, String.raw`maildir (?:over|full)`,
    String.raw`boîte (?:aux lettres |mail )?pleine`, String.raw`postfach (?:ist )?voll`, String.raw`ящик переполнен`,
  ].join('|'), 'i')],
  ['mesg_too_big', new RegExp([
    String.raw`(?:message|mail|e-?mail|data) (?:is )?too (?:large|big|long)`, String.raw`(?:message|mail|e-?mail) (?:file )?size (?:\S+ )?(?:exceeds|is (?:over|larger|bigger|greater)|too)`,
    String.raw`exceeds? (?:the )?(?:fixed |maximum |max(?:imum)? (?:allowed |permitted )?)?(?:message )?size`, String.raw`size (?:limit )?exceeded`, String.raw`message length exceeds`,
    String.raw`exceeded (?:the )?(?:maximum |max )?(?:message )?size`, String.raw`larger than (?:the )?(?:maximum|allowed)`, String.raw`size (?:limit|exceeds)`,
  ].join('|'), 'i')],
  ['exceed_limit', new RegExp([
    String.raw`too many recipients`, String.raw`recipient limit`, String.raw`exceed(?:s|ed)? (?:the )?(?:recipient|maximum number of recipients)`, String.raw`limit (?:of|on) recipients`,
  ].join('|'), 'i')],
  ['system_full', new RegExp([
    String.raw`insufficient system (?:storage|resources)`, String.raw`(?:disk|file ?system|system storage|mail system) (?:is )?full`, String.raw`no space left`, String.raw`out of (?:disk|memory)`,
  ].join('|'), 'i')],
  ['suspended', new RegExp([
    String.raw`(?:account|mailbox|user|address|recipient)(?: \S+)? (?:has been |is |was )?(?:temporarily |permanently )?(?:disabled|suspended|deactivated|inactive|frozen|locked|blocked for inactivity|closed|expired|not active|on hold)`,
    String.raw`(?:disabled|suspended|inactive|deactivated|frozen|locked) (?:account|mailbox|user)`, String.raw`is no longer (?:active|in use)`,
    String.raw`temporarily (?:disabled|suspended)`, String.raw`mailbox (?:is )?unavailable due to inactivity`,
  ].join('|'), 'i')],
  ['has_moved', new RegExp([
    String.raw`user has moved`, String.raw`has moved`, String.raw`mailbox has moved`, String.raw`not local;? please try`, String.raw`address (?:has )?changed`,
    String.raw`no longer accepts mail`, String.raw`forward(?:ing)? address`, String.raw`new address is`,
  ].join('|'), 'i')],
  ['not_accept', new RegExp([
    String.raw`(?:does not|doesn't|do not|don't|will not) accept (?:any )?(?:e-?)?mail`, String.raw`null mx`, String.raw`nullmx`, String.raw`not accepting (?:any )?(?:e-?)?mail`,
    String.raw`accepts no (?:e-?)?mail`,
  ].join('|'), 'i')],
  ['host_unknown', new RegExp([
    String.raw`host (?:or domain name )?(?:unknown|not found)`, String.raw`unknown host`, String.raw`domain (?:name )?(?:not found|does not exist|doesn't exist|unknown|is not valid|not valid)`,
    String.raw`no such (?:domain|host)`, String.raw`unknown domain`, String.raw`unroutable`, String.raw`unrouteable`, String.raw`invalid domain`,
    String.raw`domain \S* ?(?:couldn't|could not|cannot|can't) be found`, String.raw`name or service not known`, String.raw`nxdomain`,
    String.raw`(?:no|non-?existent) (?:mx|mail exchanger|dns|a) (?:records?|hosts?|for)`, String.raw`mx (?:records? )?(?:lookup |look up )?(?:failed|not found|point to non-?existent)`,
    String.raw`dns error: (?:address resolution|domain name)`, String.raw`bad destination system`, String.raw`address resolution (?:of \S+ )?failed`,
    String.raw`(?:the )?domain name in the (?:e-?mail )?address is incorrect`, String.raw`no (?:valid )?route to (?:the )?(?:domain|destination)`, String.raw`unable to resolve`,
    String.raw`host not reachable.*not found`, String.raw`does not exist in dns`, String.raw`no mail server`,
  ].join('|'), 'i')],
  ['user_unknown', new RegExp([
    String.raw`(?:user|recipient|addressee|mailbox|account|address|e-?mail address|e-?mail account|destination)(?: name)? (?:is )?(?:unknown|not found|not known|invalid)`,
    String.raw`unknown (?:user|recipient|mailbox|account|local[- ]part|address|e-?mail)`, String.raw`invalid (?:recipient|mailbox|user|address|e-?mail address|account)`,
    String.raw`no such (?:user|recipient|mailbox|account|address|person|local user|e-?mail)`, String.raw`(?:user|mailbox|account|address|recipient)s? (?:\S+ ){0,2}(?:does not|doesn't|did not|not) exist`,
    String.raw`(?:does not|doesn't) exist`, String.raw`not (?:a )?(?:valid|known) (?:user|recipient|mailbox|address|account)`, String.raw`no mailbox here`,
    String.raw`(?:mailbox|user|recipient) (?:is )?unavailable`, String.raw`mailbox not available`, String.raw`not listed in (?:the )?(?:domino directory|public name|address book|directory)`,
    String.raw`user (?:\S+ )?not listed`, String.raw`(?:couldn't|could not|cannot|can't) be found`, String.raw`bad destination mailbox`, String.raw`(?:doesn't|does not) have an? (?:\S+ )?account`, String.raw`no account by that name`, String.raw`not our customer`, String.raw`recipient (?:address )?rejected: access denied`,
    String.raw`recipient (?:address )?rejected: (?:undeliverable|unverified) address`, String.raw`address (?:lookup )?failed`, String.raw`user (?:not )?(?:in|on) (?:this|the) (?:server|system|domain)`,
    String.raw`(?:no|not a) (?:valid )?(?:mailbox|user|recipient)\b`, String.raw`mailbox (?:does not|doesn't) exist`, String.raw`undeliverable address`,
    String.raw`delivery to the following recipient failed permanently`, String.raw`nicht (?:vorhanden|gefunden|bekannt)`, String.raw`n'existe pas`, String.raw`introuvable`, String.raw`inconnu`,
    String.raw`не существует`, String.raw`нет такого`,
  ].join('|'), 'i')],
  ['filtered', new RegExp([
    String.raw`filter`, String.raw`(?:rejected|refused|blocked|declined) by (?:the )?(?:recipient|user|addressee)`, String.raw`(?:recipient|user) (?:has )?(?:rejected|refused|blocked|declined)`,
    String.raw`(?:does not|doesn't) (?:wish|want) to receive`, String.raw`chosen not to receive`, String.raw`only accepts mail from`, String.raw`not accepting (?:messages|mail) from`,
  ].join('|'), 'i')],
  ['policy_violation', new RegExp([
    String.raw`polic(?:y|ies)`, String.raw`administrative(?:ly)? prohibit`, String.raw`prohibited`, String.raw`not (?:authori[sz]ed|permitted|allowed)`, String.raw`delivery not authori[sz]ed`,
    String.raw`refused by (?:the )?(?:local|site)`, String.raw`\brestricted\b`, String.raw`access denied`, String.raw`denied by`, String.raw`\bforbidden\b`, String.raw`compliance`,
  ].join('|'), 'i')],
  ['content_error', new RegExp([
    String.raw`content`, String.raw`attachment`, String.raw`(?:header|headers) (?:\S+ )?(?:too (?:long|large|many)|invalid|missing|malformed|error|not rfc)`, String.raw`\bmalformed\b`,
    String.raw`line (?:is )?too long`, String.raw`\bmime\b`, String.raw`8-?bit`, String.raw`bare (?:lf|cr|linefeed|newline)`, String.raw`(?:not|non)[- ]compliant`, String.raw`rfc ?(?:5322|2822|822)`,
    String.raw`message (?:format|encoding|header)`, String.raw`invalid (?:message|character|header)`, String.raw`duplicate (?:header|message-id)`, String.raw`missing (?:\S+ )?header`,
    String.raw`file type`, String.raw`executable`,
  ].join('|'), 'i')],
  ['expired', new RegExp([
    String.raw`expired`, String.raw`retry time(?:out)? (?:not reached|exceeded)`, String.raw`time ?out(?:s)? (?:was )?exceeded`, String.raw`(?:too long|too old|too many days) (?:in|on) (?:the )?queue`,
    String.raw`could not be delivered (?:with)?in`, String.raw`gave up`, String.raw`delivery time`, String.raw`maximum (?:queue )?(?:lifetime|time)`, String.raw`unable to deliver (?:in|within)`,
    String.raw`(?:past|after|for (?:more than|over)) \d+ (?:hours|days)`, String.raw`message (?:has been )?in (?:the )?queue`, String.raw`delayed`, String.raw`not yet been delivered`,
  ].join('|'), 'i')],
  ['too_many_conn', new RegExp([
    String.raw`too many (?:concurrent |simultaneous |parallel |open )?(?:smtp )?(?:connections|sessions)`, String.raw`connection (?:limit|count)`, String.raw`(?:concurrent|simultaneous) connections`,
    String.raw`too many (?:hosts|clients)`,
  ].join('|'), 'i')],
  ['rate_limited', new RegExp([
    String.raw`rate[- ]?limit`, String.raw`too many (?:messages|mails|emails|requests|errors|commands|recipients this session)`, String.raw`(?:sending|receiving|message|mail) (?:mail )?(?:at a )?rate`,
    String.raw`throttl`, String.raw`greylist`, String.raw`graylist`, String.raw`try (?:again )?later`, String.raw`(?:limit|quota) (?:of )?(?:messages|mails|emails)`,
    String.raw`exceeded (?:the )?(?:hourly|daily|sending|message) (?:limit|quota)`, String.raw`slow down`, String.raw`deferred due to`,
  ].join('|'), 'i')],
  ['network_error', new RegExp([
    String.raw`connection (?:refused|timed out|reset|closed|lost|dropped)`, String.raw`(?:timed|time) ?out`, String.raw`no route to host`, String.raw`network (?:is )?unreachable`,
    String.raw`(?:could not|couldn't|unable to|cannot|can't|failed to) (?:connect|establish)`, String.raw`lost connection`, String.raw`host (?:is )?(?:unreachable|not reachable|down)`,
    String.raw`name (?:server|service) (?:error|failure|timeout)`, String.raw`dns (?:error|failure|timeout|temporary|lookup)`, String.raw`temporary (?:dns|lookup)`,
    String.raw`no answer from`, String.raw`remote (?:server|host) (?:did not|does not|didn't) respond`, String.raw`tls (?:negotiation|handshake) fail`,
  ].join('|'), 'i')],
  ['system_error', new RegExp([
    String.raw`system (?:error|failure|problem)`, String.raw`internal (?:server )?(?:error|failure)`, String.raw`local error`, String.raw`temporar(?:y|ily) (?:failure|problem|error|unavailable|rejected|not available)`,
    String.raw`(?:mail )?loop(?:s|ing)? (?:back|detected)`, String.raw`routing loop`, String.raw`too many (?:hops|received headers)`, String.raw`server (?:error|failure|busy|unavailable)`,
    String.raw`service (?:is )?(?:unavailable|not available)`, String.raw`configuration (?:error|problem)`, String.raw`misconfigur`, String.raw`resources? (?:temporarily )?unavailable`,
    String.raw`try again`, String.raw`transient`, String.raw`processing error`, String.raw`error (?:in|while) processing`, String.raw`database`, String.raw`backend`,
  ].join('|'), 'i')],
  ['syntax_error', new RegExp([
    String.raw`syntax`, String.raw`(?:command|parameter)s? (?:not )?(?:unrecognized|recognized|implemented)`, String.raw`unrecognized command`, String.raw`invalid (?:command|argument|parameter)`,
    String.raw`bad sequence`, String.raw`line too long`, String.raw`not implemented`,
  ].join('|'), 'i')],
];

/** Last resort, after every other reason: Postfix's "Recipient address rejected: <why>" with a why nothing above knew. */
export const FALLBACK_PHRASES: readonly [BounceReason, RegExp][] = [
  ['user_unknown', /(?:recipient )?address rejected|rejected recipient|recipient (?:was )?rejected|recipient not accepted/i],
];
