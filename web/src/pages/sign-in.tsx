import { useEffect, useRef, useState, type FormEvent } from 'react';
import { post } from '../api';
import { ErrorState, useAction } from '../components/state';
import type { SessionInfo } from '../session';

/** A plain form: email, password, submit. A one-time link (#link=…) signs in by itself. */
export function SignIn({ onSignedIn }: { onSignedIn: (s: SessionInfo) => void }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const linkTried = useRef(false);

  useEffect(() => {
    const token = /[#&]link=([A-Za-z0-9_-]+)/.exec(window.location.hash)?.[1];
    if (!token || linkTried.current) return;
    linkTried.current = true;
    history.replaceState(null, '', window.location.pathname + window.location.search); // the token leaves the address bar
    void run(() => post<SessionInfo>('/session', { token })).then((s) => s && onSignedIn(s));
  }, [run, onSignedIn]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const s = await run(() => post<SessionInfo>('/session', { email, password }));
    if (s) onSignedIn(s);
  };

  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Postline</h1>
      <form onSubmit={submit} className="card">
        <label htmlFor="email">Email</label>
        <input id="email" type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <label htmlFor="password">Password</label>
        <input id="password" type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
        {error && <ErrorState error={error} />}
      </form>
      <p className="muted">Forgot your password? Run <code>postline users reset-password --email you@example.com</code> on the server.</p>
    </main>
  );
}
