import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, post, qs, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Badge, ErrorState, When, useAction } from '../components/state';

type Entry = Item<'listSuppressions'>;
const REASONS = ['manual', 'unsubscribe', 'hard_bounce', 'complaint', 'import'];

export default function SuppressionPage() {
  const [, setParams] = useSearchParams();
  const { loaded: list, params } = usePagedList<Entry>('/suppression', ['q', 'reason']);
  const q = params.get('q') ?? '';
  const reason = params.get('reason') ?? '';
  const [email, setEmail] = useState('');
  const [bulk, setBulk] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const action = useAction();

  const addOne = async (e: FormEvent) => {
    e.preventDefault();
    if (await action.run(() => post('/suppression', { email, reason: 'manual' }))) {
      setMessage(`${email} is suppressed.`);
      setEmail('');
      list.reload();
    }
  };
  const addBulk = async (e: FormEvent) => {
    e.preventDefault();
    const entries = bulk.split(/[\s,;]+/).filter(Boolean).map((address) => ({ email: address }));
    const r = await action.run(() => post<{ created: number; existing: number }>('/suppression', { reason: 'manual', entries }));
    if (r) {
      setMessage(`Added ${r.created}; ${r.existing} already suppressed.`);
      setBulk('');
      list.reload();
    }
  };
  const remove = async (address: string) => {
    if (await action.run(() => api('DELETE', `/suppression${qs({ email: address })}`))) {
      setMessage(`${address} removed from the suppression list.`);
      list.reload();
    }
  };
  return (
    <>
      <h1>Suppression list</h1>
      <div className="grid2">
        <form className="card" onSubmit={addOne} aria-label="Add an address">
          <label htmlFor="sup-email">Address</label>
          <input id="sup-email" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
          <button type="submit" disabled={action.busy}>Suppress</button>
        </form>
        <form className="card" onSubmit={addBulk} aria-label="Bulk add">
          <label htmlFor="sup-bulk">Bulk add (one address per line)</label>
          <textarea id="sup-bulk" rows={3} required value={bulk} onChange={(e) => setBulk(e.target.value)} />
          <button type="submit" disabled={action.busy}>Add all</button>
        </form>
      </div>
      {message && <p role="status">{message}</p>}
      {action.error && <ErrorState error={action.error} />}
      <form role="search" className="inline" onSubmit={(e) => { e.preventDefault(); const f = new FormData(e.currentTarget); setParams(qs({ q: String(f.get('q') ?? ''), reason: String(f.get('reason') ?? '') }).slice(1)); }}>
        <div><label htmlFor="sup-q">Search</label><input id="sup-q" name="q" type="search" defaultValue={q} /></div>
        <div>
          <label htmlFor="sup-reason">Reason</label>
          <select id="sup-reason" name="reason" defaultValue={reason}>
            <option value="">any</option>
            {REASONS.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <PagedTable
        loaded={list}
        rowKey={(e) => e.id}
        empty={`No suppressed addresses${q || reason ? ' match' : ''}.`}
        columns={[
          { header: 'Address', className: 'wrap', cell: (e) => <>{e.email}{e.detail && <div className="muted">{e.detail}</div>}</> },
          { header: 'Reason', cell: (e) => <Badge value={e.reason} /> },
          { header: 'Added', cell: (e) => <When at={e.createdAt} /> },
          { header: <span className="sr">Actions</span>, cell: (e) => <button type="button" className="danger" aria-label={`Remove ${e.email}`} onClick={() => void remove(e.email)}>Remove</button> },
        ]}
      />
    </>
  );
}
