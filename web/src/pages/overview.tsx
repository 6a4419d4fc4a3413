import { Link } from 'react-router';
import { get, type Page } from '../api';
import { Show, useLoad } from '../components/state';
import type { SessionInfo } from '../session';

interface Health { domains: { name: string; id: string; status: string; tracking: { status: string } }[]; hooks: { id: string; url: string; status: string }[] }

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
      <p className="muted">{session.account.name}: monthly quota {session.account.monthlyQuota ?? 'unlimited'}.</p>
      <AccountHealth />
    </>
  );
}
