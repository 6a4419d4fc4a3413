import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import type { SessionInfo } from '../session';

/** Grouped as people look for things: what they send, who they send it to, how the account is set up. */
const NAV: { group: string | null; links: [string, string][] }[] = [
  { group: null, links: [['/', 'Overview']] },
  { group: 'Sending', links: [['/messages', 'Messages'], ['/templates', 'Templates'], ['/campaigns', 'Campaigns'], ['/automations', 'Automations'], ['/captured', 'Captured mail'], ['/deliverability', 'Deliverability']] },
  { group: 'Audience', links: [['/lists', 'Lists'], ['/subscribers', 'Subscribers'], ['/segments', 'Segments'], ['/suppression', 'Suppression']] },
  { group: 'Settings', links: [['/settings/domains', 'Domains'], ['/settings/keys', 'API keys'], ['/webhooks', 'Webhooks'], ['/settings/account', 'Account']] },
];

export function Layout({ session, onSignOut, children }: { session: SessionInfo; onSignOut: () => void; children: ReactNode }) {
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <span className="brand">Postline</span>
        <span className="who">{session.account.name} · {session.user.email}</span>
        <button type="button" className="link" onClick={onSignOut}>Sign out</button>
      </header>
      <nav className="side" aria-label="Main">
        {NAV.map(({ group, links }) => (
          <div className="nav-group" key={group ?? 'home'}>
            {group && <h2 className="nav-h" id={`nav-${group}`}>{group}</h2>}
            <ul aria-labelledby={group ? `nav-${group}` : undefined}>
              {links.map(([to, label]) => (
                <li key={to}><NavLink to={to} end={to === '/'}>{label}</NavLink></li>
              ))}
            </ul>
          </div>
        ))}
      </nav>
      <main id="main" tabIndex={-1}>{children}</main>
    </div>
  );
}
