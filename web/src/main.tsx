import { StrictMode, lazy, Suspense, useEffect, useRef, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Navigate, Route, Routes, useLocation, useNavigate } from 'react-router';
import { api, hasSessionHint, onSignedOut, setCsrfToken } from './api';
import { Layout } from './components/layout';
import { ErrorState, Loading, asApiError } from './components/state';
import { SignIn } from './pages/sign-in';
import type { SessionInfo } from './session';
import './styles.css';

// Signed-in pages load on demand, so the signed-out first load is the sign-in form alone.
const Pages = lazy(() => import('./pages/routes'));

function App() {
  const [session, setSession] = useState<SessionInfo | null | undefined>(hasSessionHint() ? undefined : null);
  const [failure, setFailure] = useState<Error | null>(null);
  const [landing, setLanding] = useState('/');
  const navigate = useNavigate();
  const location = useLocation();
  // Set by "Sign out": the signed-out render must not remember the page as ?next=, even when it
  // runs before the router has taken the navigation to /sign-in (seen under load).
  const signingOut = useRef(false);

  useEffect(() => {
    if (session !== undefined) return;
    api<SessionInfo>('GET', '/session').then(
      (s) => {
        setCsrfToken(s.csrfToken);
        setSession(s);
      },
      (e) => (asApiError(e).problem.status === 401 ? setSession(null) : setFailure(e)),
    );
  }, [session]);

  useEffect(() => onSignedOut(() => setSession(null)), []);

  const signedIn = (s: SessionInfo) => {
    signingOut.current = false;
    setCsrfToken(s.csrfToken);
    setSession(s);
    const back = new URLSearchParams(location.search).get('next');
    // Rendered by the /sign-in route once the session is set: a person signed in by a
    // one-time link has no password yet, so they land where they set one.
    setLanding(back && back.startsWith('/') && !back.startsWith('//') ? back : s.user.hasPassword ? '/' : '/settings/account');
  };
  const signOut = async () => {
    signingOut.current = true;
    await api('DELETE', '/session').catch(() => {});
    setCsrfToken(null);
    setSession(null);
    navigate('/sign-in', { replace: true });
  };

  if (failure) return <main id="main"><ErrorState error={asApiError(failure)} /></main>;
  if (session === undefined) return <main id="main"><Loading /></main>;
  if (session === null) {
    if (location.pathname === '/sign-in') return <SignIn onSignedIn={signedIn} />;
    const next = signingOut.current ? '/' : location.pathname + location.search;
    return <Navigate to={`/sign-in${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}`} replace />;
  }
  return (
    <Layout session={session} onSignOut={signOut}>
      <Suspense fallback={<Loading />}>
        <Routes>
          <Route path="/sign-in" element={<Navigate to={landing} replace />} />
          <Route path="/*" element={<Pages session={session} onSessionChange={(s) => setSession({ ...session, ...s })} />} />
        </Routes>
      </Suspense>
    </Layout>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <BrowserRouter>
      <App />
    </BrowserRouter>
  </StrictMode>,
);
