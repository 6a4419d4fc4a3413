import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { del, get, post, qs, type Page, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { plural } from '../components/format';
import { Badge, Empty, ErrorState, Show, When, useAction, useLoad, type Loaded } from '../components/state';

type List = Item<'listLists'>;
type Subscriber = Item<'listSubscribers'>;
type ImportJob = Item<'listImports'>;

export function ListsPage() {
  const { loaded: lists } = usePagedList<List>('/lists');
  const [name, setName] = useState('');
  const [doubleOptIn, setDoubleOptIn] = useState(false);
  const create = useAction();
  const navigate = useNavigate();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const l = await create.run(() => post<List>('/lists', { name, doubleOptIn }));
    if (l) navigate(`/lists/${l.id}`);
  };
  return (
    <>
      <h1>Lists</h1>
      <form className="card inline" onSubmit={submit} aria-label="New list">
        <div><label htmlFor="list-name">New list name</label><input id="list-name" required value={name} onChange={(e) => setName(e.target.value)} /></div>
        <label className="check"><input type="checkbox" checked={doubleOptIn} onChange={(e) => setDoubleOptIn(e.target.checked)} /> Double opt-in</label>
        <button type="submit" disabled={create.busy}>Create list</button>
      </form>
      {create.error && <ErrorState error={create.error} />}
      <PagedTable
        loaded={lists}
        rowKey={(l) => l.id}
        empty="No lists yet."
        columns={[
          { header: 'List', cell: (l) => <Link to={`/lists/${l.id}`}>{l.name}</Link> },
          { header: 'Subscribers', cell: (l) => l.subscriberCount },
          { header: 'Opt-in', cell: (l) => (l.doubleOptIn ? 'double' : 'single') },
          { header: 'Created', cell: (l) => <When at={l.createdAt} /> },
        ]}
      />
    </>
  );
}

/** Polls an import job until it ends, showing a progress bar. */
function ImportProgress({ id, onDone }: { id: string; onDone: () => void }) {
  const [job, setJob] = useState<ImportJob | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    let live = true;
    let timer: ReturnType<typeof setTimeout>;
    const poll = async () => {
      try {
        const j = await get<ImportJob>(`/imports/${id}`);
        if (!live) return;
        setJob(j);
        if (j.status === 'completed' || j.status === 'failed') onDone();
        else timer = setTimeout(poll, 500);
      } catch (e) {
        if (live) setError(e);
      }
    };
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [id, onDone]);
  if (error) return <ErrorState error={error as never} />;
  if (!job) return <p role="status">Starting import…</p>;
  const pct = job.total > 0 ? Math.round((job.processed / job.total) * 100) : job.status === 'completed' ? 100 : 0;
  return (
    <div className="card" aria-live="polite">
      <label htmlFor={`imp-${id}`}>Import {job.status}: {job.processed} of {job.total} rows</label>
      <progress id={`imp-${id}`} max={100} value={pct} data-testid="import-progress">{pct}%</progress>
      <p data-testid="import-status">{job.status === 'completed' ? `Done: ${job.created} created, ${job.updated} updated, ${job.skipped} skipped.` : `${pct}%`}</p>
      {job.failure && <p className="error">{job.failure}</p>}
      {job.errors.length > 0 && <ul>{job.errors.slice(0, 20).map((e) => <li key={e.row}>Row {e.row}{e.email ? ` (${e.email})` : ''}: {e.message}</li>)}</ul>}
    </div>
  );
}

export function ListPage() {
  const { id } = useParams();
  const list = useLoad(() => get<List>(`/lists/${id}`), [id]);
  const [params] = useSearchParams();
  const cursor = params.get('cursor');
  const subscribers = useLoad(() => get<Page<Subscriber>>(`/subscribers${qs({ list: id, cursor, limit: 50 })}`), [id, cursor]);
  const [csv, setCsv] = useState('');
  const [fileName, setFileName] = useState<string | null>(null);
  const [importId, setImportId] = useState<string | null>(null);
  const [email, setEmail] = useState('');
  const action = useAction();
  const navigate = useNavigate();
  const startImport = async (e: FormEvent) => {
    e.preventDefault();
    const job = await action.run(() => post<ImportJob>('/subscribers/import', { list: id, csv }));
    if (job) setImportId(job.id);
  };
  const addOne = async (e: FormEvent) => {
    e.preventDefault();
    if (await action.run(() => post('/subscribers', { email, list: id }))) {
      setEmail('');
      subscribers.reload();
      list.reload();
    }
  };
  return (
    <Show loaded={list}>
      {(l) => (
        <>
          <p><Link to="/lists">← Lists</Link></p>
          <h1>{l.name}</h1>
          <p className="muted" data-testid="list-count">{plural(l.subscriberCount, 'subscriber')} · {l.doubleOptIn ? 'double opt-in' : 'single opt-in'}</p>
          <div className="grid2">
            <form className="card" onSubmit={addOne} aria-label="Add a subscriber">
              <label htmlFor="sub-email">Add a subscriber</label>
              <input id="sub-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
              <button type="submit" disabled={action.busy}>Add</button>
            </form>
            <form className="card" onSubmit={startImport} aria-label="Import CSV">
              <label htmlFor="csv-file">Import a CSV file (header row with an email column)</label>
              <input id="csv-file" type="file" accept=".csv,text/csv" onChange={async (e) => {
                const f = e.target.files?.[0];
                if (f) { setCsv(await f.text()); setFileName(f.name); }
              }} />
              <label htmlFor="csv-text">…or paste CSV</label>
              <textarea id="csv-text" rows={3} value={csv} onChange={(e) => { setCsv(e.target.value); setFileName(null); }} placeholder={'email,name\nada@example.com,Ada'} />
              <button type="submit" disabled={action.busy || !csv}>Import{fileName ? ` ${fileName}` : ''}</button>
            </form>
          </div>
          {action.error && <ErrorState error={action.error} />}
          {importId && <ImportProgress id={importId} onDone={() => { subscribers.reload(); list.reload(); }} />}
          <h2>Subscribers</h2>
          <SubscriberTable loaded={subscribers} />
          <button type="button" className="danger" onClick={() => confirm(`Delete the list ${l.name}?`) && void action.run(() => del(`/lists/${l.id}`)).then(() => navigate('/lists'))}>Delete list</button>
        </>
      )}
    </Show>
  );
}

function SubscriberTable({ loaded }: { loaded: Loaded<Page<Subscriber>> }) {
  return (
    <PagedTable
      loaded={loaded}
      testId="subscribers"
      rowKey={(s) => s.id}
      empty="No subscribers yet."
      columns={[
        { header: 'Email', className: 'wrap', cell: (s) => <Link to={`/subscribers/${s.id}`}>{s.email}</Link> },
        { header: 'Name', cell: (s) => s.name ?? '' },
        { header: 'Status', cell: (s) => <Badge value={s.status} /> },
        { header: 'Since', cell: (s) => <When at={s.createdAt} /> },
      ]}
    />
  );
}

export function SubscribersPage() {
  const [, setParams] = useSearchParams();
  const { loaded: subscribers, params } = usePagedList<Subscriber>('/subscribers', ['q', 'status']);
  const q = params.get('q') ?? '';
  const status = params.get('status') ?? '';
  return (
    <>
      <h1>Subscribers</h1>
      <form role="search" className="inline" onSubmit={(e) => { e.preventDefault(); const f = new FormData(e.currentTarget); setParams(qs({ q: String(f.get('q') ?? ''), status: String(f.get('status') ?? '') }).slice(1)); }}>
        <div><label htmlFor="subs-q">Search</label><input id="subs-q" name="q" type="search" defaultValue={q} /></div>
        <div>
          <label htmlFor="subs-status">Status</label>
          <select id="subs-status" name="status" defaultValue={status}>
            <option value="">any</option>
            {['active', 'unconfirmed', 'unsubscribed', 'bounced', 'complained'].map((s) => <option key={s}>{s}</option>)}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <SubscriberTable loaded={subscribers} />
    </>
  );
}

interface MessageRow { id: string; subject: string; status: string; createdAt: string }
interface MessageDetail { id: string; subject: string; events: { id: string; type: string; occurredAt: string; url?: string }[] }
type TimelineItem = { at: string; key: string; text: string; messageId: string; subject: string };

/**
 * One subscriber: fields, attributes, lists, and a timeline of the messages sent to the address
 * with their events (the 10 latest messages' events, from GET /emails/{id}), newest first.
 */
export function SubscriberPage() {
  const { id } = useParams();
  const loaded = useLoad(async () => {
    const s = await get<Subscriber>(`/subscribers/${encodeURIComponent(id ?? '')}`);
    const [lists, messages] = await Promise.all([
      get<Page<{ id: string; name: string }>>('/lists?limit=100'),
      get<Page<MessageRow>>(`/emails${qs({ to: s.email, limit: 50 })}`),
    ]);
    const details = await Promise.all(messages.data.slice(0, 10).map((m) => get<MessageDetail>(`/emails/${m.id}`)));
    const timeline: TimelineItem[] = [
      ...messages.data.map((m) => ({ at: m.createdAt, key: `m-${m.id}`, text: `Message ${m.status}`, messageId: m.id, subject: m.subject })),
      ...details.flatMap((d) => d.events.map((e) => ({ at: e.occurredAt, key: e.id, text: e.type.replaceAll('_', ' ') + (e.url ? ` ${e.url}` : ''), messageId: d.id, subject: d.subject }))),
    ].sort((a, b) => b.at.localeCompare(a.at));
    return { s, listNames: new Map(lists.data.map((l) => [l.id, l.name])), timeline, messageCount: messages.data.length };
  }, [id]);
  return (
    <>
      <p><Link to="/subscribers">← Subscribers</Link></p>
      <Show loaded={loaded}>
        {({ s, listNames, timeline, messageCount }) => (
          <>
            <h1>{s.name ? `${s.name} ` : ''}<span className="muted">{s.email}</span> <Badge value={s.status} /></h1>
            <div className="grid2">
              <section className="card" aria-labelledby="sub-facts-h">
                <h2 id="sub-facts-h">Details</h2>
                <dl className="facts">
                  <dt>Email</dt><dd>{s.email}</dd>
                  <dt>Name</dt><dd>{s.name ?? '—'}</dd>
                  <dt>Status</dt><dd>{s.status}</dd>
                  <dt>Id</dt><dd><code>{s.id}</code></dd>
                  <dt>Since</dt><dd><When at={s.createdAt} /></dd>
                </dl>
                <h3>Lists</h3>
                {s.lists.length === 0 ? <p className="muted">In no list.</p> : (
                  <ul data-testid="subscriber-lists">{s.lists.map((l) => <li key={l}><Link to={`/lists/${l}`}>{listNames.get(l) ?? l}</Link></li>)}</ul>
                )}
              </section>
              <section className="card" aria-labelledby="sub-attrs-h">
                <h2 id="sub-attrs-h">Attributes</h2>
                {Object.keys(s.attributes).length === 0 ? <p className="muted">No attributes.</p> : (
                  <dl className="facts" data-testid="subscriber-attributes">
                    {Object.entries(s.attributes).map(([k, v]) => [<dt key={`k-${k}`}><code>{k}</code></dt>, <dd key={`v-${k}`} className="wrap">{typeof v === 'string' ? v : JSON.stringify(v)}</dd>])}
                  </dl>
                )}
                <p className="muted">In templates: <code>{'{{ subscriber.attributes.<key> }}'}</code></p>
              </section>
            </div>
            <section aria-labelledby="sub-timeline-h">
              <h2 id="sub-timeline-h">Timeline <span className="muted">({plural(messageCount, 'message')})</span></h2>
              {timeline.length === 0 ? <Empty>No messages to this address yet.</Empty> : (
                <ol className="timeline" data-testid="subscriber-timeline">
                  {timeline.map((t) => <li key={t.key}><When at={t.at} /> · {t.text} · <Link to={`/messages/${t.messageId}`}>{t.subject || '(no subject)'}</Link></li>)}
                </ol>
              )}
            </section>
          </>
        )}
      </Show>
    </>
  );
}
