import { Link } from 'react-router';
import { get, type Page, type Answer } from '../api';
import { LineChart } from '../components/chart';
import { pct, plural } from '../components/format';
import { Show, useLoad } from '../components/state';
import type { SessionInfo } from '../session';

interface Health { domains: { name: string; id: string; status: string; tracking: { status: string } }[]; hooks: { id: string; url: string; status: string }[] }

type Stats = Answer<'getStats'>;


/** The last 30 days from GET /api/v1/stats: totals, a daily chart, the quota bar and the sending health. */
function AccountStats() {
  const stats = useLoad(() => get<Stats>('/stats'), []);
  return (
    <Show loaded={stats}>
      {(s) => {
        const bounces = s.counts.hardBounced + s.counts.softBounced;
        const tiles: [string, number, string?][] = [
          ['Sent', s.counts.sent], ['Delivered', s.counts.delivered, pct(s.rates.delivery)], ['Bounces', bounces, pct(s.rates.bounce)],
          ['Opens', s.counts.opens, `${pct(s.rates.open)} unique`], ['Clicks', s.counts.clicks, `${pct(s.rates.click)} unique`],
        ];
        return (
          <>
            <section aria-labelledby="stats-h">
              <h2 id="stats-h">Last 30 days <span className="muted">({s.from} to {s.to}, UTC)</span></h2>
              <div className="stats" data-testid="overview-stats">
                {tiles.map(([label, n, rate]) => <div className="stat" key={label}><strong>{n}</strong>{label}{rate && <span className="muted rate">{rate}</span>}</div>)}
              </div>
              <LineChart
                title="Daily activity"
                points={s.daily.map((d) => ({ x: d.date, sent: d.sent, delivered: d.delivered, bounces: d.hardBounced + d.softBounced, opens: d.opens, clicks: d.clicks }))}
                series={[{ key: 'sent', label: 'Sent', color: '#5a6270' }, { key: 'delivered', label: 'Delivered', color: '#17663a' }, { key: 'bounces', label: 'Bounces', color: '#a31b1b' }, { key: 'opens', label: 'Opens', color: '#1f5fbf' }, { key: 'clicks', label: 'Clicks', color: '#7a3fb0' }]}
                xLabel={(x) => x.slice(5)}
              />
            </section>
            <section className="card" aria-labelledby="quota-h">
              <h2 id="quota-h">Monthly quota</h2>
              {s.quota.limit === null ? <p data-testid="quota-used">{plural(s.quota.used, 'message')} this month; no limit.</p> : (
                <>
                  <label htmlFor="quota-bar" data-testid="quota-used">{s.quota.used.toLocaleString('en')} of {plural(s.quota.limit, 'message')} this month</label>
                  <progress id="quota-bar" className="quota" max={s.quota.limit} value={Math.min(s.quota.used, s.quota.limit)}>{pct(s.quota.used / s.quota.limit)}</progress>
                </>
              )}
              <p className="muted">Resets <time dateTime={s.quota.resetsAt}>{new Date(s.quota.resetsAt).toLocaleDateString()}</time>.</p>
            </section>
            <section className="card" aria-labelledby="sending-h">
              <h2 id="sending-h">Sending health</h2>
              <p data-testid="sending-health">
                {s.health.status === 'ok' ? 'OK' : s.health.status === 'warning' ? 'Warning' : 'At risk'}: bounce rate {pct(s.health.bounceRate)}, complaint rate {pct(s.health.complaintRate)} over the last 7 days.
                {s.health.sendingBlocked && ' Campaign sending is blocked until the risk is acknowledged.'}
              </p>
            </section>
          </>
        );
      }}
    </Show>
  );
}

/** Account health from the documented list routes: what still needs doing before mail flows well. */
function AccountHealth() {
  const health = useLoad(async (): Promise<Health> => {
    const [domains, hooks] = await Promise.all([
      get<Page<Health['domains'][number]>>('/domains?limit=100'),
      get<Page<Health['hooks'][number]>>('/hooks?limit=100'),
    ]);
    return { domains: domains.data, hooks: hooks.data };
  }, []);
  return (
    <section className="card" aria-labelledby="health-h">
      <h2 id="health-h">Account health</h2>
      <Show loaded={health}>
        {(h) => {
          const issues: { text: string; to: string }[] = [];
          if (h.domains.length === 0) issues.push({ text: 'No sender domain yet: add one and publish its DNS records.', to: '/settings/domains' });
          for (const d of h.domains) {
            if (d.status !== 'verified') issues.push({ text: `${d.name} is not verified: mail from it is refused.`, to: `/settings/domains/${d.id}` });
            else if (d.tracking.status !== 'verified') issues.push({ text: `${d.name}: links still use Postline's tracking host (no CNAME yet).`, to: `/settings/domains/${d.id}` });
          }
          for (const hk of h.hooks) if (hk.status === 'disabled') issues.push({ text: `Webhook ${hk.url} is disabled.`, to: `/webhooks/${hk.id}` });
          return issues.length === 0
            ? <p data-testid="health">All good: every domain is verified and every webhook is active.</p>
            : <ul data-testid="health">{issues.map((i) => <li key={i.text}><Link to={i.to}>{i.text}</Link></li>)}</ul>;
        }}
      </Show>
    </section>
  );
}

export default function OverviewPage({ session }: { session: SessionInfo }) {
  return (
    <>
      <h1>Overview</h1>
      <p className="muted">{session.account.name}</p>
      <AccountStats />
      <AccountHealth />
    </>
  );
}
