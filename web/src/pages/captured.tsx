import { Link, useParams, useSearchParams } from 'react-router';
import { get, qs, type Page } from '../api';
import { Empty, Pager, Show, When, useLoad } from '../components/state';
import { RawSource } from './messages';

interface Captured { id: string; envelopeFrom: string; envelopeTo: string; subject: string; capturedAt: string }

/** Capture mode (POSTLINE_DELIVERY=capture) keeps every message here instead of sending it. */
export function CapturedPage() {
  const [params] = useSearchParams();
  const cursor = params.get('cursor');
  const list = useLoad(() => get<Page<Captured>>(`/captured${qs({ cursor, limit: 50 })}`), [cursor]);
  return (
    <>
      <h1>Captured mail</h1>
      <p className="muted">With <code>POSTLINE_DELIVERY=capture</code>, messages are kept here instead of being sent.</p>
      <Show loaded={list}>
        {(page) => page.data.length === 0 ? <Empty>Nothing captured. Capture mode keeps messages here instead of sending them.</Empty> : (
          <>
            <table>
              <thead><tr><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Captured</th></tr></thead>
              <tbody>{page.data.map((c) => (
                <tr key={c.id}>
                  <td className="wrap">{c.envelopeTo}</td>
                  <td className="wrap"><Link to={`/captured/${c.id}`}>{c.subject || '(no subject)'}</Link></td>
                  <td><When at={c.capturedAt} /></td>
                </tr>
              ))}</tbody>
            </table>
            <Pager nextCursor={page.nextCursor} />
          </>
        )}
      </Show>
    </>
  );
}

export function CapturedMessagePage() {
  const { id } = useParams();
  const message = useLoad(() => get<{ id: string; subject: string; to: string; html: string | null; text: string | null; createdAt: string }>(`/emails/${id}`), [id]);
  return (
    <Show loaded={message}>
      {(m) => (
        <>
          <p><Link to="/captured">← Captured mail</Link></p>
          <h1 className="wrap">{m.subject || '(no subject)'}</h1>
          <p className="wrap">To {m.to} · <When at={m.createdAt} /> · <Link to={`/messages/${m.id}`}>Timeline</Link></p>
          {m.html ? <iframe title="Rendered message" sandbox="" srcDoc={m.html} className="mail-frame" /> : <pre className="wrap">{m.text}</pre>}
          <RawSource id={m.id} />
        </>
      )}
    </Show>
  );
}
