import { useState, type FormEvent } from 'react';
import { del, post, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Badge, CopyButton, ErrorState, When, useAction } from '../components/state';

type ApiKey = Item<'listApiKeys'>;

/** Settings → API keys: live keys, and test keys with the option right next to creation. The key is shown once. */
export default function KeysPage() {
  const { loaded: keys } = usePagedList<ApiKey>('/keys');
  const [name, setName] = useState('');
  const [test, setTest] = useState(false);
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const create = useAction();
  const revoke = useAction();

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const k = await create.run(() => post<ApiKey & { key: string }>('/keys', { ...(name ? { name } : {}), mode: test ? 'test' : 'live' }));
    if (k) {
      setCreated(k);
      setName('');
      keys.reload();
    }
  };

  return (
    <>
      <h1>API keys</h1>
      <form className="card inline" onSubmit={submit} aria-label="Create an API key">
        <div>
          <label htmlFor="key-name">Name</label>
          <input id="key-name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} placeholder="e.g. production server" />
        </div>
        <label className="check"><input type="checkbox" checked={test} onChange={(e) => setTest(e.target.checked)} /> Test key (sk_test_: validates, sends nothing)</label>
        <button type="submit" disabled={create.busy}>Create {test ? 'test' : 'live'} key</button>
      </form>
      {create.error && <ErrorState error={create.error} />}
      {created && (
        <div className="reveal" role="status">
          <p><strong>Your new {created.mode} key.</strong> Copy it now: it is shown only this once.</p>
          <code className="secret" data-testid="new-key">{created.key}</code> <CopyButton value={created.key} />
          <button type="button" className="link" onClick={() => setCreated(null)}>Done</button>
        </div>
      )}
      {revoke.error && <ErrorState error={revoke.error} />}
      <PagedTable
        loaded={keys}
        rowKey={(k) => k.id}
        empty="No API keys yet."
        columns={[
          { header: 'Name', cell: (k) => k.name ?? <span className="muted">unnamed</span> },
          { header: 'Key', cell: (k) => <code>{k.prefix}…</code> },
          { header: 'Mode', cell: (k) => <Badge value={k.mode} /> },
          { header: 'Created', cell: (k) => <When at={k.createdAt} /> },
          { header: 'Last used', cell: (k) => <When at={k.lastUsedAt} /> },
          {
            header: <span className="sr">Actions</span>,
            cell: (k) => (k.revokedAt ? <span className="muted">revoked <When at={k.revokedAt} /></span> : (
              <button type="button" className="danger" disabled={revoke.busy} aria-label={`Revoke ${k.name ?? k.prefix}`}
                onClick={() => confirm(`Revoke ${k.prefix}…? Requests with it will get 401.`) && void revoke.run(() => del(`/keys/${k.id}`)).then(keys.reload)}>Revoke</button>
            )),
          },
        ]}
      />
    </>
  );
}
