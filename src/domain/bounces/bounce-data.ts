import type { BounceVerdict } from '../../mail/bounces/verdict.js';

/** The `bounce` object of hard_bounce / soft_bounce events (docs/bounces.md). */
export function bounceData(v: BounceVerdict, diagnostic: string | null, mta: string | null): Record<string, unknown> {
  return { reason: v.reason, category: v.side, status: v.status, diagnostic, mta };
}
