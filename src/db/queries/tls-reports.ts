import type { Queryable } from '../pool.js';

/** One session outcome, already keyed (src/domain/tls-reports/sessions.ts builds these). */
export interface TlsSessionCount {
  domain: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  policyType: 'sts' | 'no-policy-found';
  policyHash: string;
  policyText: string;
  resultType: string;
  receivingMx: string;
  receivingIp: string;
  sendingIp: string;
  sessions: number;
}

// Many outcomes in one statement (a delivery batch's worth), each adding to its row. Equal
// keys in one batch are summed first: ON CONFLICT cannot touch one row twice in a statement.
export async function addTlsSessions(db: Queryable, counts: TlsSessionCount[]): Promise<void> {
  if (counts.length === 0) return;
  const col = <K extends keyof TlsSessionCount>(k: K) => counts.map((c) => c[k]);
  await db.query(
    `INSERT INTO tls_report_sessions AS t (domain, day, policy_type, policy_hash, policy_text, result_type, receiving_mx, receiving_ip, sending_ip, sessions)
     SELECT domain, day, policy_type, policy_hash, min(policy_text), result_type, receiving_mx, receiving_ip, sending_ip, sum(sessions)
       FROM unnest($1::text[], $2::date[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::bigint[])
            AS c(domain, day, policy_type, policy_hash, policy_text, result_type, receiving_mx, receiving_ip, sending_ip, sessions)
      GROUP BY domain, day, policy_type, policy_hash, result_type, receiving_mx, receiving_ip, sending_ip
     ON CONFLICT (domain, day, policy_type, policy_hash, result_type, receiving_mx, receiving_ip, sending_ip)
     DO UPDATE SET sessions = t.sessions + EXCLUDED.sessions`,
    [col('domain'), col('day'), col('policyType'), col('policyHash'), col('policyText'), col('resultType'), col('receivingMx'), col('receivingIp'), col('sendingIp'), col('sessions')],
  );
}

// Everything counted for one domain on one day: what a report is built from. Ordered so the
// report lists policies and failures the same way each time it is printed.
export async function tlsSessionsOf(db: Queryable, domain: string, day: string): Promise<TlsSessionCount[]> {
  const { rows } = await db.query(
    `SELECT domain, to_char(day, 'YYYY-MM-DD') AS day, policy_type, policy_hash, policy_text, result_type, receiving_mx, receiving_ip, sending_ip, sessions
       FROM tls_report_sessions WHERE domain = $1 AND day = $2::date
      ORDER BY policy_type, policy_hash, result_type, receiving_mx, receiving_ip, sending_ip`,
    [domain, day],
  );
  return rows.map((r) => ({
    domain: r.domain,
    day: r.day,
    policyType: r.policy_type,
    policyHash: r.policy_hash,
    policyText: r.policy_text,
    resultType: r.result_type,
    receivingMx: r.receiving_mx,
    receivingIp: r.receiving_ip,
    sendingIp: r.sending_ip,
    sessions: Number(r.sessions),
  }));
}

// Domains with sessions on a day: the ones a daily sending run considers.
export async function tlsReportDomainsOn(db: Queryable, day: string): Promise<string[]> {
  const { rows } = await db.query('SELECT DISTINCT domain FROM tls_report_sessions WHERE day = $1::date ORDER BY domain', [day]);
  return rows.map((r) => r.domain as string);
}

// Counts older than `before` (a UTC day) are of no more use: reports cover one past day.
export async function purgeTlsSessions(db: Queryable, before: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM tls_report_sessions WHERE day < $1::date', [before]);
  return rowCount ?? 0;
}

// Claims the sending of one domain's report for one day; false when another worker has it.
export async function claimTlsReportSend(db: Queryable, domain: string, day: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    'INSERT INTO tls_reports_sent (domain, day, claimed_at) VALUES ($1, $2::date, $3) ON CONFLICT DO NOTHING',
    [domain, day, now],
  );
  return rowCount === 1;
}

// The outcome of one try, and when to try the addresses that failed for a temporary reason
// again (null: never).
export async function recordTlsReportSend(db: Queryable, domain: string, day: string, outcome: unknown, retryAt: Date | null = null): Promise<void> {
  await db.query('UPDATE tls_reports_sent SET outcome = $3, retry_at = $4 WHERE domain = $1 AND day = $2::date', [domain, day, JSON.stringify(outcome), retryAt]);
}

// Takes the reports due for another try, each by one worker: clearing retry_at under the row's
// lock is the claim, SKIP LOCKED lets another worker take the others meanwhile.
export async function claimTlsReportRetries(db: Queryable, now: Date, limit = 100): Promise<{ domain: string; day: string; attempts: number; outcome: unknown }[]> {
  const { rows } = await db.query(
    `UPDATE tls_reports_sent t SET retry_at = NULL, attempts = t.attempts + 1, claimed_at = $1
      WHERE (t.domain, t.day) IN (SELECT domain, day FROM tls_reports_sent WHERE retry_at <= $1 ORDER BY retry_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING t.domain, to_char(t.day, 'YYYY-MM-DD') AS day, t.attempts, t.outcome`,
    [now, limit],
  );
  return rows;
}
