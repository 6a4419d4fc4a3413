import { Link, useParams } from 'react-router';
import { get, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Show, When, useLoad } from '../components/state';
import { MailPreview } from '../components/mail-preview';
import { RawSource } from './messages';

type Captured = Item<'listCapturedMessages'>;

/** Capture mode (POSTLINE_DELIVERY=capture) keeps every message here instead of sending it. */
export function CapturedPage() {
  const { loaded } = usePagedList<Captured>('/captured');
  return (
    <>
      <h1>Captured mail</h1>
      <p className="muted">With <code>POSTLINE_DELIVERY=capture</code>, messages are kept here instead of being sent.</p>
      <PagedTable
        loaded={loaded}
        rowKey={(c) => c.id}
        empty="Nothing captured. Capture mode keeps messages here instead of sending them."
        columns={[
          { header: 'To', className: 'wrap', cell: (c) => c.envelopeTo },
          { header: 'Subject', className: 'wrap', cell: (c) => <Link to={`/captured/${c.id}`}>{c.subject || '(no subject)'}</Link> },
          { header: 'Captured', cell: (c) => <When at={c.capturedAt} /> },
        ]}
      />
    </>
  );
}

export function CapturedMessagePage() {
  const { id } = useParams();
  const message = useLoad(() => get<{ id: string; subject: string; to: string; createdAt: string }>(`/emails/${id}`), [id]);
  return (
    <Show loaded={message}>
      {(m) => (
        <>
          <p><Link to="/captured">← Captured mail</Link></p>
          <h1 className="wrap">{m.subject || '(no subject)'}</h1>
          <p className="wrap">To {m.to} · <When at={m.createdAt} /> · <Link to={`/messages/${m.id}`}>Timeline</Link></p>
          <MailPreview id={m.id} title="Rendered message" />
          <RawSource id={m.id} />
        </>
      )}
    </Show>
  );
}
