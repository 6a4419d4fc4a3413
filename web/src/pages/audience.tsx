import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { del, get, post, qs, type Page, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Badge, ErrorState, Show, When, useAction, useLoad, type Loaded } from '../components/state';

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
          <p className="muted">{l.subscriberCount} subscribers · {l.doubleOptIn ? 'double opt-in' : 'single opt-in'}</p>
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
          {importId && <ImportProgress id={importId} onDone={() => { subscribers.reload(); }} />}
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
        { header: 'Email', className: 'wrap', cell: (s) => s.email },
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
