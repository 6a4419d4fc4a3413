import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { del, get, post, type Answer } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Badge, CopyButton, ErrorState, Show, When, useAction, useLoad } from '../components/state';

type Domain = Answer<'getDomain'>;

export function DomainsPage() {
  const { loaded: domains } = usePagedList<Domain>('/domains');
  const [name, setName] = useState('');
  const add = useAction();
  const navigate = useNavigate();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const d = await add.run(() => post<Domain>('/domains', { name }));
    if (d) navigate(`/settings/domains/${d.id}`);
  };
  return (
    <>
      <h1>Sender domains</h1>
      <form className="card inline" onSubmit={submit} aria-label="Add a domain">
        <div>
          <label htmlFor="domain-name">Domain</label>
          <input id="domain-name" required value={name} onChange={(e) => setName(e.target.value)} placeholder="acme.com" />
        </div>
        <button type="submit" disabled={add.busy}>Add domain</button>
      </form>
      {add.error && <ErrorState error={add.error} />}
      <PagedTable
        loaded={domains}
        rowKey={(d) => d.id}
        empty="No domains yet. Add the domain you send from, then publish its DNS records."
        columns={[
          { header: 'Domain', cell: (d) => <Link to={`/settings/domains/${d.id}`}>{d.name}</Link> },
          { header: 'Status', cell: (d) => <Badge value={d.status} /> },
          { header: 'Tracking links', cell: (d) => <Badge value={d.tracking.status} /> },
          { header: 'Added', cell: (d) => <When at={d.createdAt} /> },
        ]}
      />
    </>
  );
}

/**
 * What a record's badge says. On a verified domain a failed lookup (temp_error) or a record never
 * checked (marked verified in development) is not an error to act on: it reads "not rechecked".
 */
function recordState(d: Domain, r: Domain['records'][number]): string {
  if (d.status === 'verified' && (r.status === 'temp_error' || r.status === 'pending')) return 'not_rechecked';
  return r.status;
}

/** The deliverability page: every record with its status and a copy button, Verify, Check tracking CNAME. */
export function DomainPage({ development }: { development: boolean }) {
  const { id } = useParams();
  const domain = useLoad(() => get<Domain>(`/domains/${id}`), [id]);
  const [fresh, setFresh] = useState<Domain | null>(null);
  const action = useAction();
  const navigate = useNavigate();
  const verify = async (path: string) => {
    const d = await action.run(() => post<Domain>(`/domains/${id}/${path}`));
    if (d) setFresh(d);
  };
  return (
    <Show loaded={domain}>
      {(loaded) => {
        const d = fresh ?? loaded;
        return (
          <>
            <p><Link to="/settings/domains">← Domains</Link></p>
            <h1>{d.name} <Badge value={d.status} /></h1>
            {d.status === 'verified'
              ? <p data-testid="domain-state">Verified: mail from {d.name} is accepted and signed. Verify checks the records again. Last checked: <When at={d.checkedAt} /></p>
              : <p className="muted" data-testid="domain-state">Publish these records at your DNS provider, then press Verify. Last checked: <When at={d.checkedAt} /></p>}
            <div className="actions">
              <button type="button" onClick={() => void verify('verify')} disabled={action.busy}>Verify</button>
              {development && d.status !== 'verified' && (
                <button type="button" onClick={() => void verify('mark-verified')} disabled={action.busy} title="Development server (POSTLINE_DELIVERY=capture): no DNS check, mail is captured, never delivered">Mark verified (development)</button>
              )}
              <button type="button" onClick={() => void verify('tracking/verify')} disabled={action.busy}>Check tracking CNAME</button>
            </div>
            {action.error && <ErrorState error={action.error} />}
            <section aria-labelledby="track-h" className="card">
              <h2 id="track-h">Tracking links</h2>
              <p data-testid="tracking-state">
                {d.tracking.status === 'verified'
                  ? <>Links and the open pixel use your domain: <code>{d.tracking.host}</code>.</>
                  : <>Links still use Postline&apos;s host. Point <code>{d.tracking.host}</code> (CNAME) at <code>{d.tracking.target}</code> and press Check tracking CNAME.</>}
                {' '}<Badge value={d.tracking.status} /> <When at={d.tracking.checkedAt} />
              </p>
            </section>
            <h2>DNS records</h2>
            <ul className="records">
              {d.records.map((r) => (
                <li key={r.purpose} className="card">
                  <div className="record-head">
                    <strong>{r.purpose.replaceAll('_', ' ')}</strong> <span className="muted">{r.type}{r.priority !== undefined ? ` (priority ${r.priority})` : ''}{r.required ? ' · required' : ' · recommended'}</span> <Badge value={recordState(d, r)} />
                  </div>
                  <dl>
                    <dt>Name</dt><dd><code className="wrap">{r.name}</code> <CopyButton value={r.name} ariaLabel={`Copy name of the ${r.purpose} record`} /></dd>
                    <dt>Value</dt><dd><code className="wrap">{r.value}</code> <CopyButton value={r.value} ariaLabel={`Copy value of the ${r.purpose} record`} /></dd>
                  </dl>
                  {r.detail && recordState(d, r) === r.status && <p className="muted">{r.detail}</p>}
                </li>
              ))}
            </ul>
            <button type="button" className="danger" onClick={() => confirm(`Delete ${d.name}?`) && void action.run(() => del(`/domains/${d.id}`)).then(() => navigate('/settings/domains'))}>Delete domain</button>
          </>
        );
      }}
    </Show>
  );
}
