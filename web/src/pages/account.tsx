import { useState, type FormEvent } from 'react';
import { del, patch, post, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { ErrorState, When, useAction } from '../components/state';
import type { SessionInfo } from '../session';

type User = Item<'listUsers'>;

/** Settings → Account: your email and password, and the people who can sign in to this account. */
export default function AccountPage({ session, onSessionChange }: { session: SessionInfo; onSessionChange: (s: Partial<SessionInfo>) => void }) {
  const [email, setEmail] = useState(session.user.email);
  const [password, setPassword] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const me = useAction();
  const { loaded: users } = usePagedList<User>('/users');
  const [newEmail, setNewEmail] = useState('');
  const [newPassword, setNewPassword] = useState('');
  const team = useAction();

  const saveMe = async (e: FormEvent) => {
    e.preventDefault();
    const body: Record<string, string> = {};
    if (email !== session.user.email) body.email = email;
    if (password) body.password = password;
    if (Object.keys(body).length === 0) return;
    const u = await me.run(() => patch<User>(`/users/${session.user.id}`, body));
    if (u) {
      setPassword('');
      setMessage('Saved.');
      onSessionChange({ user: { ...session.user, email: u.email, hasPassword: u.hasPassword } });
      users.reload();
    }
  };
  const addUser = async (e: FormEvent) => {
    e.preventDefault();
    if (await team.run(() => post<User>('/users', { email: newEmail, password: newPassword }))) {
      setNewEmail('');
      setNewPassword('');
      users.reload();
    }
  };
  return (
    <>
      <h1>Account</h1>
      <p>{session.account.name} · <code>{session.account.id}</code> · monthly quota {session.account.monthlyQuota ?? 'unlimited'}</p>
      {!session.user.hasPassword && <p className="notice" role="note">You signed in with a one-time link. Set your email and a password now to sign in again later.</p>}
      <form className="card" onSubmit={saveMe} aria-label="Your sign-in">
        <h2>Your sign-in</h2>
        <label htmlFor="me-email">Email</label>
        <input id="me-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} autoComplete="username" />
        <label htmlFor="me-password">New password (at least 10 characters)</label>
        <input id="me-password" type="password" value={password} onChange={(e) => setPassword(e.target.value)} autoComplete="new-password" />
        <button type="submit" disabled={me.busy}>Save</button>
        {message && <p role="status">{message}</p>}
        {me.error && <ErrorState error={me.error} />}
      </form>
      <h2>People</h2>
      <form className="card inline" onSubmit={addUser} aria-label="Add a person">
        <div><label htmlFor="u-email">Email</label><input id="u-email" type="email" required value={newEmail} onChange={(e) => setNewEmail(e.target.value)} /></div>
        <div><label htmlFor="u-password">Password</label><input id="u-password" type="password" required value={newPassword} onChange={(e) => setNewPassword(e.target.value)} autoComplete="new-password" /></div>
        <button type="submit" disabled={team.busy}>Add person</button>
      </form>
      {team.error && <ErrorState error={team.error} />}
      <PagedTable
        loaded={users}
        rowKey={(u) => u.id}
        empty="No users."
        columns={[
          { header: 'Email', className: 'wrap', cell: (u) => <>{u.email}{u.id === session.user.id && <span className="muted"> (you)</span>}</> },
          { header: 'Password set', cell: (u) => <When at={u.passwordSetAt} /> },
          { header: 'Added', cell: (u) => <When at={u.createdAt} /> },
          { header: <span className="sr">Actions</span>, cell: (u) => u.id !== session.user.id && <button type="button" className="danger" aria-label={`Remove ${u.email}`} onClick={() => confirm(`Remove ${u.email}?`) && void team.run(() => del(`/users/${u.id}`)).then(users.reload)}>Remove</button> },
        ]}
      />
    </>
  );
}
