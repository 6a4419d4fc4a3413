import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, get, post, qs, type Page } from '../api';
import { Badge, Empty, ErrorState, Pager, Show, When, useAction, useLoad } from '../components/state';

interface Entry { id: string; email: string; reason: string; detail: string | null; createdAt: string }
const REASONS = ['manual', 'unsubscribe', 'hard_bounce', 'complaint', 'import'];

export default function SuppressionPage() {
  const [params, setParams] = useSearchParams();
  const cursor = params.get('cursor');
  const q = params.get('q') ?? '';
  const reason = params.get('reason') ?? '';
  const list = useLoad(() => get<Page<Entry>>(`/suppression${qs({ q, reason, cursor })}`), [q, reason, cursor]);
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
      <Show loaded={list}>
        {(page) => page.data.length === 0 ? <Empty>No suppressed addresses{q || reason ? ' match' : ''}.</Empty> : (
          <>
            <table>
              <thead><tr><th scope="col">Address</th><th scope="col">Reason</th><th scope="col">Added</th><th scope="col"><span className="sr">Actions</span></th></tr></thead>
              <tbody>{page.data.map((s) => (
                <tr key={s.id}>
                  <td className="wrap">{s.email}{s.detail && <div className="muted">{s.detail}</div>}</td>
                  <td><Badge value={s.reason} /></td>
                  <td><When at={s.createdAt} /></td>
                  <td><button type="button" className="danger" aria-label={`Remove ${s.email}`} onClick={() => void remove(s.email)}>Remove</button></td>
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
