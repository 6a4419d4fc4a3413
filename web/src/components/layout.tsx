import type { ReactNode } from 'react';
import { NavLink } from 'react-router';
import type { SessionInfo } from '../session';

const NAV: [string, string][] = [
  ['/', 'Overview'],
  ['/messages', 'Messages'],
  ['/templates', 'Templates'],
  ['/lists', 'Lists'],
  ['/subscribers', 'Subscribers'],
  ['/segments', 'Segments'],
  ['/suppression', 'Suppression'],
  ['/campaigns', 'Campaigns'],
  ['/automations', 'Automations'],
  ['/webhooks', 'Webhooks'],
  ['/captured', 'Captured mail'],
  ['/settings/domains', 'Domains'],
  ['/settings/keys', 'API keys'],
  ['/settings/account', 'Account'],
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
        <ul>
          {NAV.map(([to, label]) => (
            <li key={to}><NavLink to={to} end={to === '/'}>{label}</NavLink></li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>{children}</main>
    </div>
  );
}
