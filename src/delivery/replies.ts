/**
 * What a receiver's reply asks of the sender, beyond the message's own fate: slow down (a
 * throttle rule of the provider matched: suspend the destination, never bounce) or come back
 * later (greylisting: retry after the provider's greylistRetry, not on the backoff schedule).
 */
import type { DeliveryResult } from '../mail/classify.js';
import { rulesOf, type ProviderPolicy, type ReplyRule } from '../delivery-policy.js';

export type ReplyAsk = { kind: 'throttle'; rule: ReplyRule } | { kind: 'greylist' } | null;

const ENHANCED = /^\d\.\d{1,3}\.\d{1,3}$/;

function matches(rule: ReplyRule, response: string, enhanced: string | null): boolean {
  if (ENHANCED.test(rule.match)) {
    if (enhanced === rule.match) return true;
    return new RegExp(`(?<![\\d.])${rule.match.replace(/\./g, '\\.')}(?![\\d.]*\\d)`).test(response);
  }
  return response.toLowerCase().includes(rule.match.toLowerCase());
}

/** Only a server's reply can ask anything: our own failures and network errors never do. */
export function readReply(result: DeliveryResult, policy: ProviderPolicy): ReplyAsk {
  if (result.kind === 'delivered' || result.code === null) return null;
  const rule = rulesOf(policy).find((r) => matches(r, result.response, result.enhanced));
  if (rule) return { kind: 'throttle', rule };
  if (result.kind === 'deferred' && isGreylisting(result.code, result.enhanced, result.response)) return { kind: 'greylist' };
  return null;
}

export function isGreylisting(code: number, enhanced: string | null, response: string): boolean {
  return /grey\s?list|gray\s?list/i.test(response) || (code === 450 && enhanced === '4.2.0') || (code === 451 && enhanced === '4.7.1');
}
