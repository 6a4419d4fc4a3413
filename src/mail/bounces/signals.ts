/**
 * What kind of mail came back, from the words and headers around the report: a bounce, a
 * "delivered" notice, an auto-reply (vacation, out of office, ticket systems), or none of
 * these. Structured reports (DSN, ARF, MDN) are recognised by their parts in ./read.ts;
 * this is for everything written for humans.
 */

export interface MailSignals {
  /** From MAILER-DAEMON, postmaster, "Mail Delivery System" and their relatives. */
  fromDaemon: boolean;
  /** The subject is one MTAs give bounces ("Undeliverable:", "failure notice"…). */
  bounceSubject: boolean;
  /** The text says a delivery failed ("could not be delivered", "permanent error"…). */
  bounceText: boolean;
  /** The bounce is a warning: delivery is delayed and still being tried. */
  delayed: boolean;
  /** A notice that delivery succeeded ("Delivered:", "Delivery Status Notification (Success)"). */
  delivered: boolean;
  /** Marked as an auto-reply by a header meant for that, or by its subject. */
  autoReplyStrong: boolean;
  /** Weaker hints: Auto-Submitted, vacation wording in the body. */
  autoReplyWeak: boolean;
}

const DAEMON_FROM = /mailer[-_]?daemon|postmaster|mail ?delivery|delivery ?(?:status|subsystem|system|notification)|mail ?(?:administrator|router|system)|system ?administrator|\bmdaemon\b|nobody@|bounce[sd]?@|\bnon[-_]?delivery|\bmailerdaemon|\bpostoffice\b|\bmailsystem\b/i;

const BOUNCE_SUBJECT = new RegExp([
  String.raw`undeliver`, String.raw`undelivered`, String.raw`non[- ]?deliver`, String.raw`not (?:be )?deliver(?:ed|able)`, String.raw`delivery (?:status notification \((?:failure|delay)\)|failure|failed|has failed|problem|error|incomplete|delayed|warning)`,
  String.raw`mail delivery failed`, String.raw`failure notice`, String.raw`returned mail`, String.raw`returned to sender`, String.raw`returning message`, String.raw`non remis`,
  String.raw`unzustellbar`, String.raw`nicht zustellbar`, String.raw`could not be delivered`, String.raw`message status - undeliverable`, String.raw`permanent delivery failure`,
  String.raw`mail system error`, String.raw`warning: (?:could not send|message .* delayed)`, String.raw`delayed mail`, String.raw`\bbounced?\b`, String.raw`unable to deliver`,
  String.raw`\bNDR\b`, String.raw`недоставлен`, String.raw`не доставлено`, String.raw`échec de (?:la )?(?:remise|distribution)`, String.raw`message not delivered`,
  String.raw`delivery failure`, String.raw`mail could not`, String.raw`rejected:`, String.raw`^\*\*\s*message`, String.raw`mail not delivered`, String.raw`undelivered mail`,
  String.raw`delivery notification: delivery has failed`, String.raw`zustellung fehlgeschlagen`, String.raw`mensaje no entregado`, String.raw`no se pudo entregar`,
].join('|'), 'i');

const BOUNCE_TEXT = new RegExp([
  String.raw`could ?n[o']t be delivered`, String.raw`was ?n[o']t delivered`, String.raw`was not delivered`, String.raw`undeliverable`, String.raw`delivery (?:to the following recipients? )?(?:has )?failed`,
  String.raw`failed permanently`, String.raw`permanent (?:fatal )?error`, String.raw`was ?n[o']t able to deliver`, String.raw`(?:unable|not able) to deliver`, String.raw`mail delivery software`,
  String.raw`error (?:has )?(?:occurred )?(?:while )?(?:attempting to )?deliver`, String.raw`did not reach`, String.raw`cannot be delivered`, String.raw`could not deliver`,
  String.raw`has not yet been delivered`, String.raw`following addresses? had`, String.raw`delivery to the following recipient`, String.raw`returned mail`,
  String.raw`there was an error delivering`, String.raw`failed to deliver`, String.raw`(?:message|mail) (?:was )?(?:rejected|refused|returned)`, String.raw`could not be sent`,
  String.raw`delivery (?:attempts? )?(?:has |have )?(?:failed|been unsuccessful)`, String.raw`fatal (?:delivery )?errors?`, String.raw`was undeliverable`, String.raw`delivery problem`,
  String.raw`n'a pas pu être (?:remis|distribué|délivré)`, String.raw`konnte nicht zugestellt werden`, String.raw`не (?:может быть|удалось|было) доставлено`, String.raw`delivery is delayed`,
  String.raw`tried to deliver your message`, String.raw`not be delivered`, String.raw`recipient(?:s)? (?:cannot|could not) be reached`,
].join('|'), 'i');

const DELAYED = /(?:has not yet been delivered|delivery (?:to the following recipients? )?(?:has been |is )?delayed|will (?:continue to )?(?:re)?try|still (?:be )?trying|transient non-fatal|delivery status notification \(delay\)|warning: (?:could not send|message .* delayed)|delayed mail|\bdelay(?:ed)? (?:warning|notification)|no action is required on your part|retry (?:until|for)|not been delivered yet|delivery attempts will continue)/i;

const DELIVERED_SUBJECT = /^(?:delivered|relayed|delivery (?:status )?notification ?\(?(?:success|relay)\)?|delivery report: success|successful (?:mail )?delivery|delivery notification: delivery has succeeded|zugestellt:|remis :|entregado:)/i;
const DELIVERED_TEXT = /(?:delivery to (?:these|the following) recipients? (?:or groups )?(?:is complete|succeeded|was successful)|(?:has been|was) (?:successfully )?delivered to the following|your message (?:has been|was) (?:successfully )?delivered|successfully delivered to|relayed to (?:non-delivery-report-capable|the following))/i;

const AUTO_REPLY_HEADERS = ['x-autoreply', 'x-autorespond', 'x-autoresponder', 'x-autoreply-from', 'x-mail-autoreply', 'x-vacation', 'x-autogenerated'];
const AUTO_REPLY_SUBJECT = /^(?:(?:re|aw|sv|fw):\s*)?(?:auto(?:matic|matische|matisk)?[- ]?(?:reply|response|respond|antwort|answer|svar)|out of (?:the )?office|ooo\b|\[?out of office|vacation|on vacation|away from|abwesen|absence|abwesenheitsnotiz|r[ée]ponse automatique|respuesta autom[aá]tica|risposta automatica|automatisch antwoord|automatische antwort|autosvar|automaattinen|自動返信|自动回复|自動回覆|автоответ|fuera de la oficina|absent|i am out|im urlaub|congés)/i;
const AUTO_REPLY_TEXT = /(?:i (?:am|'m|will be) (?:currently )?(?:out of (?:the )?office|away|on (?:vacation|holiday|leave|annual leave|maternity|paternity))|out of (?:the )?office (?:until|from|and)|limited access to (?:my )?e-?mail|will (?:reply|respond|get back to you)|will be back (?:on|in)|return(?:ing)? (?:to the office )?on|this is an auto(?:mated|matic)[- ](?:reply|response|message)|automatic (?:reply|response)|vacation|auto-?reply|thank you for (?:your|contacting)|no longer (?:with|work(?:ing)? (?:at|for))|have left (?:the company|\S+)|bin (?:bis|ab) |abwesend|je suis absent|estoy fuera)/i;

export function readSignals(input: { from: string; subject: string; text: string; headers: Map<string, unknown> }): MailSignals {
  const { from, subject, text, headers } = input;
  const head = text.slice(0, 6000);
  const autoSubmitted = String(headers.get('auto-submitted') ?? '').toLowerCase();
  const precedence = String(headers.get('precedence') ?? '').toLowerCase();
  const autoHeader = AUTO_REPLY_HEADERS.some((h) => headers.has(h)) || precedence === 'auto_reply';
  return {
    fromDaemon: DAEMON_FROM.test(from),
    bounceSubject: BOUNCE_SUBJECT.test(subject),
    bounceText: BOUNCE_TEXT.test(head),
    delayed: DELAYED.test(subject) || DELAYED.test(head),
    delivered: DELIVERED_SUBJECT.test(subject.trim()) || DELIVERED_TEXT.test(head),
    autoReplyStrong: autoHeader || AUTO_REPLY_SUBJECT.test(subject.trim()),
    autoReplyWeak: autoSubmitted.startsWith('auto-replied') || AUTO_REPLY_TEXT.test(head),
  };
}
