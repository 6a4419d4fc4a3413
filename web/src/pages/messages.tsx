import { Link, useParams, useSearchParams } from 'react-router';
import { useState } from 'react';
import { get, getText, qs, type Answer } from '../api';
import { MailPreview } from '../components/mail-preview';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Badge, CopyButton, ErrorState, Show, When, useAction, useLoad } from '../components/state';

type Message = Answer<'getEmail'>;
interface Event { id: string; type: string; occurredAt: string; url?: string; data: Record<string, unknown> }
const STATUSES = ['queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'failed', 'suppressed', 'held'];

export function MessagesPage() {
  const [, setParams] = useSearchParams();
  const { loaded: messages, params } = usePagedList<Message>('/emails', ['to', 'status', 'tag']);
  const to = params.get('to') ?? '';
  const status = params.get('status') ?? '';
  const tag = params.get('tag') ?? '';
  return (
    <>
      <h1>Messages</h1>
      <form role="search" className="inline" onSubmit={(e) => { e.preventDefault(); const f = new FormData(e.currentTarget); setParams(qs({ to: String(f.get('to') ?? ''), status: String(f.get('status') ?? ''), tag: String(f.get('tag') ?? '') }).slice(1)); }}>
        <div><label htmlFor="m-to">Recipient</label><input id="m-to" name="to" type="search" defaultValue={to} placeholder="ada@example.com" /></div>
        <div>
          <label htmlFor="m-status">Status</label>
          <select id="m-status" name="status" defaultValue={status}><option value="">any</option>{STATUSES.map((s) => <option key={s}>{s}</option>)}</select>
        </div>
        <div><label htmlFor="m-tag">Tag</label><input id="m-tag" name="tag" type="search" defaultValue={tag} /></div>
        <button type="submit">Search</button>
      </form>
      <PagedTable
        loaded={messages}
        rowKey={(m) => m.id}
        empty={`No messages${to || status || tag ? ' match' : ' yet. Send one with POST /api/v1/emails'}.`}
        columns={[
          { header: 'To', className: 'wrap', cell: (m) => m.to },
          { header: 'Subject', className: 'wrap', cell: (m) => <><Link to={`/messages/${m.id}`}>{m.subject || '(no subject)'}</Link>{m.tags.length > 0 && <div className="muted">{m.tags.join(', ')}</div>}</> },
          { header: 'Status', cell: (m) => <Badge value={m.status} /> },
          { header: 'Sent', cell: (m) => <When at={m.createdAt} /> },
        ]}
      />
    </>
  );
}

/** A message: its fields, the timeline of events, the rendered body and the raw source. */
export function MessagePage() {
  const { id } = useParams();
  const message = useLoad(() => get<Message & { html: string | null; text: string | null; events: Event[] }>(`/emails/${id}`), [id]);
  return (
    <Show loaded={message}>
      {(m) => (
        <>
          <p><Link to="/messages">← Messages</Link></p>
          <h1 className="wrap">{m.subject || '(no subject)'}</h1>
          <dl className="facts">
            <dt>Status</dt><dd><Badge value={m.status} /></dd>
            <dt>From</dt><dd className="wrap">{m.from.name ? `${m.from.name} <${m.from.email}>` : m.from.email}</dd>
            <dt>To</dt><dd className="wrap">{m.to}</dd>
            <dt>Tags</dt><dd>{m.tags.join(', ') || '—'}</dd>
            <dt>Attempts</dt><dd>{m.attempts}{m.lastMx ? ` via ${m.lastMx}` : ''}</dd>
            <dt>Last response</dt><dd className="wrap">{m.lastResponse ?? '—'}</dd>
            <dt>Id</dt><dd><code className="wrap">{m.id}</code></dd>
          </dl>
          <h2>Timeline</h2>
          <ol className="timeline" data-testid="timeline">
            <li><When at={m.createdAt} /> accepted</li>
            {m.events.map((e) => (
              <li key={e.id}><When at={e.occurredAt} /> <Badge value={e.type} /> {e.url && <span className="wrap">{e.url}</span>} {typeof e.data.reason === 'string' && <span className="wrap">{e.data.reason}</span>}</li>
            ))}
          </ol>
          {m.html && (<><h2>Rendered</h2><iframe title="Message preview" sandbox="" srcDoc={m.html} className="mail-frame" /></>)}
          {!m.html && m.text && (<><h2>Text</h2><pre className="wrap">{m.text}</pre></>)}
          {/* A campaign message keeps merge data, not content: it is rendered from its source. */}
          {!m.html && !m.text && (<><h2>Rendered</h2><MailPreview id={m.id} title="Message preview" /></>)}
          <RawSource id={m.id} />
        </>
      )}
    </Show>
  );
}

/**
 * The message's raw source (GET /emails/{id}/raw), fetched when opened: captured mail is the
 * kept bytes; any other message is rebuilt from its stored content, and the page says so.
 */
export function RawSource({ id }: { id: string }) {
  const [raw, setRaw] = useState<{ text: string; source: string } | null>(null);
  const load = useAction();
  return (
    <details onToggle={(e) => {
      if ((e.currentTarget as HTMLDetailsElement).open && raw === null) {
        void load.run(async () => {
          const r = await getText(`/emails/${encodeURIComponent(id)}/raw`);
          setRaw({ text: r.text, source: r.headers.get('postline-source') ?? '' });
        });
      }
    }}>
      <summary>Raw source</summary>
      {load.error && <ErrorState error={load.error} />}
      {raw !== null && (
        <>
          <p className="muted" data-testid="raw-source-kind">
            {raw.source === 'captured'
              ? 'The bytes as they would have left (captured mail).'
              : 'Rebuilt from the stored content through the same build path: Message-ID, headers, parts and tracked links are the ones sent; MIME boundaries, Date and the DKIM signature values are the rebuild\'s.'}
          </p>
          <p><CopyButton value={raw.text} label="Copy source" /></p>
          <pre className="raw" data-testid="raw-source">{raw.text}</pre>
        </>
      )}
    </details>
  );
}
