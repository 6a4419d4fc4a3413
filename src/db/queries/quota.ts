/**
 * The monthly quota's gate inside one accepting statement (the send API's
 * insertAcceptedMessages, a campaign batch's insertCampaignMessages): a CTE `q` adds `count`
 * to the account's usage_counters row for the month only while the sum stays within `limit`,
 * and the statement's inserts run only when `q` returned a row, so the counter, the messages
 * and their events commit together or not at all. One row per account and month: accounts
 * without a quota skip it (NO_QUOTA), as that row lock would serialise all their sends.
 *
 * Pushes the month, count and limit onto `params`; `accountRef` is the statement's parameter
 * holding the account id (e.g. `$2`).
 */
export function quotaGate(params: unknown[], accountRef: string, quota: { month: string; count: number; limit: number }): QuotaGate {
  params.push(quota.month, quota.count, quota.limit);
  const n = params.length;
  const [month, count, limit] = [`$${n - 2}::date`, `$${n - 1}::int`, `$${n}::int`];
  return {
    counter: `q AS (
      INSERT INTO usage_counters AS u (account_id, month, sent)
      SELECT ${accountRef}::text, ${month}, ${count} WHERE ${count} <= ${limit}
      ON CONFLICT (account_id, month) DO UPDATE SET sent = u.sent + EXCLUDED.sent WHERE u.sent + EXCLUDED.sent <= ${limit}
      RETURNING sent
    ),`,
    gate: 'EXISTS (SELECT 1 FROM q)',
  };
}

export interface QuotaGate {
  /** The CTE, with its trailing comma, to open the statement's WITH list. */
  counter: string;
  /** The condition the statement's inserts take in their WHERE. */
  gate: string;
}

export const NO_QUOTA: QuotaGate = { counter: '', gate: 'TRUE' };
