import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { del, get, post, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { Badge, CopyButton, ErrorState, Show, When, useAction, useLoad } from '../components/state';

type Hook = Item<'listHooks'>;
type Delivery = Item<'listHookDeliveries'>;

const EVENTS = ['sent', 'delivered', 'open', 'click', 'hard_bounce', 'soft_bounce', 'spam', 'unsubscribe', 'deferred'];
const SHORT: Record<string, string[]> = { open: ['open'], click: ['click'], bounce: ['hard_bounce', 'soft_bounce'], complaint: ['spam'], unsub: ['unsubscribe'] };

function SecretReveal({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <div className="reveal" role="status">
      <p><strong>Signing secret.</strong> Copy it now: it is shown only this once.</p>
      <code className="secret" data-testid="hook-secret">{secret}</code> <CopyButton value={secret} />
      <button type="button" className="link" onClick={onDone}>Done</button>
    </div>
  );
}

export function WebhooksPage() {
  const { loaded: hooks } = usePagedList<Hook>('/hooks');
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Set<string>>(new Set(['delivered', 'hard_bounce', 'soft_bounce', 'spam']));
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const create = useAction();
  const toggle = (types: string[], on: boolean) => setEvents((prev) => {
    const next = new Set(prev);
    types.forEach((t) => (on ? next.add(t) : next.delete(t)));
    return next;
  });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const h = await create.run(() => post<Hook & { secret: string }>('/hooks', { url, events: [...events] }));
    if (h) {
      setSecret({ id: h.id, secret: h.secret });
      setUrl('');
      hooks.reload();
    }
  };
  return (
    <>
      <h1>Webhooks</h1>
      <form className="card" onSubmit={submit} aria-label="Create a webhook">
        <label htmlFor="hook-url">Endpoint URL</label>
        <input id="hook-url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/webhooks/postline" />
        <fieldset>
          <legend>Events</legend>
          <div className="checks">
            {Object.entries(SHORT).map(([short, types]) => (
              <label key={short} className="check"><input type="checkbox" checked={types.every((t) => events.has(t))} onChange={(e) => toggle(types, e.target.checked)} /> {short}</label>
            ))}
          </div>
          <details>
            <summary>All event types</summary>
            <div className="checks">
              {EVENTS.map((t) => (
                <label key={t} className="check"><input type="checkbox" checked={events.has(t)} onChange={(e) => toggle([t], e.target.checked)} /> {t}</label>
              ))}
            </div>
          </details>
        </fieldset>
        <button type="submit" disabled={create.busy || events.size === 0}>Create webhook</button>
      </form>
      {create.error && <ErrorState error={create.error} />}
      {secret && <SecretReveal secret={secret.secret} onDone={() => setSecret(null)} />}
      <PagedTable
        loaded={hooks}
        rowKey={(h) => h.id}
        empty="No webhooks yet."
        columns={[
          { header: 'URL', className: 'wrap', cell: (h) => <Link to={`/webhooks/${h.id}`}>{h.url}</Link> },
          { header: 'Events', cell: (h) => h.events.join(', ') },
          { header: 'Status', cell: (h) => <Badge value={h.status} /> },
          { header: 'Created', cell: (h) => <When at={h.createdAt} /> },
        ]}
      />
    </>
  );
}

export function WebhookPage() {
  const { id } = useParams();
  const hook = useLoad(() => get<Hook>(`/hooks/${id}`), [id]);
  const { loaded: deliveries } = usePagedList<Delivery>(`/hooks/${id}/deliveries`);
  const [secret, setSecret] = useState<string | null>(null);
  const [testResult, setTestResult] = useState<string | null>(null);
  const action = useAction();
  const navigate = useNavigate();
  const sendTest = async () => {
    const r = await action.run(() => post<{ delivered: boolean; statusCode: number | null; error: string | null }>(`/hooks/${id}/test`));
    if (r) {
      setTestResult(r.delivered ? `Test delivered (HTTP ${r.statusCode}).` : `Test not delivered: ${r.error ?? `HTTP ${r.statusCode}`}`);
      deliveries.reload();
    }
  };
  const rotate = async () => {
    if (!confirm('Rotate the signing secret? The old one stops working at once.')) return;
    const r = await action.run(() => post<{ secret: string }>(`/hooks/${id}/rotate-secret`));
    if (r) setSecret(r.secret);
  };
  const enable = async () => {
    const r = await action.run(() => post<Hook>(`/hooks/${id}/enable`));
    if (r) hook.reload();
  };
  return (
    <Show loaded={hook}>
      {(h) => (
        <>
          <p><Link to="/webhooks">← Webhooks</Link></p>
          <h1 className="wrap">{h.url}</h1>
          <p><Badge value={h.status} /> {h.disabledReason && <span>Disabled: {h.disabledReason}</span>}</p>
          <p>Events: {h.events.join(', ')}</p>
          <div className="actions">
            <button type="button" onClick={() => void sendTest()} disabled={action.busy}>Send test</button>
            <button type="button" onClick={() => void rotate()} disabled={action.busy}>Rotate secret</button>
            {h.status === 'disabled' && <button type="button" onClick={() => void enable()} disabled={action.busy}>Re-enable</button>}
            <button type="button" className="danger" disabled={action.busy}
              onClick={() => confirm('Delete this webhook?') && void action.run(() => del(`/hooks/${h.id}`)).then(() => navigate('/webhooks'))}>Delete</button>
          </div>
          {action.error && <ErrorState error={action.error} />}
          {testResult && <p role="status">{testResult}</p>}
          {secret && <SecretReveal secret={secret} onDone={() => setSecret(null)} />}
          <h2>Delivery log</h2>
          <PagedTable
            loaded={deliveries}
            testId="delivery-log"
            rowKey={(d) => d.id}
            empty="No deliveries yet. Send a test to see one here."
            columns={[
              { header: 'When', cell: (d) => <When at={d.attemptedAt} /> },
              { header: 'Outcome', cell: (d) => <><Badge value={d.outcome} /> #{d.attempt}</> },
              { header: 'HTTP', cell: (d) => d.statusCode ?? '—' },
              { header: 'Events', cell: (d) => d.eventCount },
              { header: 'Time', cell: (d) => `${d.durationMs} ms` },
              { header: 'Error', className: 'wrap', cell: (d) => <>{d.error ?? ''}{d.nextAttemptAt && <> (retry <When at={d.nextAttemptAt} />)</>}</> },
            ]}
          />
        </>
      )}
    </Show>
  );
}
