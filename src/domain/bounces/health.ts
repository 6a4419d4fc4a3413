import { countOutcomesSince } from '../../db/queries/bounces.js';
import type { Queryable } from '../../db/pool.js';

/**
 * The account's sending health (docs/bounces.md): what its recent failures say about *it*.
 * Sender-side bounces (blocked, spam_detected, auth_failure, …) never suppress a recipient;
 * this is where they surface instead, with the rates mailbox providers watch.
 */
export interface AccountHealth {
  windowDays: number;
  from: string;
  to: string;
  sent: number;
  delivered: number;
  /** Dead addresses (suppressed). */
  hardBounces: number;
  /** Every other final failure, any side. */
  softBounces: number;
  complaints: number;
  senderSide: { total: number; rate: number; byReason: Record<string, number> };
  hardBounceRate: number;
  complaintRate: number;
  status: 'ok' | 'warning' | 'critical';
  issues: { code: string; message: string }[];
}

/** Thresholds as the large mailbox providers publish them (complaints 0.1 % / 0.3 %) and ESPs use for bounces. */
const LIMITS = {
  senderSide: { warning: 0.02, critical: 0.05 },
  hardBounce: { warning: 0.02, critical: 0.05 },
  complaint: { warning: 0.001, critical: 0.003 },
};
/** Rates of fewer sends say little; below this only counts are shown. */
const MIN_SENT_FOR_RATES = 20;

export async function accountHealth(db: Queryable, accountId: string, now: Date, windowDays: number): Promise<AccountHealth> {
  const from = new Date(now.getTime() - windowDays * 86_400_000);
  const counts = await countOutcomesSince(db, accountId, from);
  const sum = (f: (c: (typeof counts)[number]) => boolean) => counts.filter(f).reduce((n, c) => n + c.n, 0);
  const sent = sum((c) => c.type === 'sent');
  const byReason: Record<string, number> = {};
  for (const c of counts) if (c.category === 'sender' && c.reason && (c.type === 'soft_bounce' || c.type === 'hard_bounce')) byReason[c.reason] = (byReason[c.reason] ?? 0) + c.n;
  const senderTotal = Object.values(byReason).reduce((a, b) => a + b, 0);
  const hardBounces = sum((c) => c.type === 'hard_bounce');
  const complaints = sum((c) => c.type === 'spam');
  const rate = (n: number) => (sent > 0 ? Math.round((n / sent) * 10_000) / 10_000 : 0);
  const health: AccountHealth = {
    windowDays, from: from.toISOString(), to: now.toISOString(), sent, delivered: sum((c) => c.type === 'delivered'), hardBounces,
    softBounces: sum((c) => c.type === 'soft_bounce'), complaints,
    senderSide: { total: senderTotal, rate: rate(senderTotal), byReason }, hardBounceRate: rate(hardBounces), complaintRate: rate(complaints),
    status: 'ok', issues: [],
  };
  const judge = (code: string, value: number, limit: { warning: number; critical: number }, what: string) => {
    if (sent < MIN_SENT_FOR_RATES || value < limit.warning) return;
    const level = value >= limit.critical ? 'critical' : 'warning';
    if (level === 'critical' || health.status === 'ok') health.status = level;
    health.issues.push({ code, message: `${what}: ${(value * 100).toFixed(2)} % of sent mail in the last ${windowDays} days (${level} at ${(limit[level] * 100).toFixed(1)} %)` });
  };
  const top = Object.entries(byReason).sort((a, b) => b[1] - a[1]).map(([r]) => r).slice(0, 3).join(', ');
  judge('sender_side_bounces', health.senderSide.rate, LIMITS.senderSide, `receivers refused our mail (${top || 'sender side'})`);
  judge('hard_bounces', health.hardBounceRate, LIMITS.hardBounce, 'addresses that do not exist');
  judge('complaints', health.complaintRate, LIMITS.complaint, 'spam complaints');
  return health;
}
