import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { get, patch, post, qs, type Page, type Answer, type Item } from '../api';
import { CodeEditor } from '../components/code-editor';
import { MergeWarnings, PreviewWidths, type MergeWarning } from '../components/merge-warnings';
import { LineChart } from '../components/chart';
import { pct, plural } from '../components/format';
import { PagedTable, StatusFilter, usePagedList } from '../components/paged-table';
import { Badge, Empty, ErrorState, Show, When, useAction, useLoad } from '../components/state';

const STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'] as const;

type Progress = Campaign['progress'];
type CampaignSummary = Item<'listCampaigns'>;
type Campaign = Answer<'getCampaign'>;
interface NamedRow { id: string; name: string }

export function CampaignsPage() {
  const { loaded, params } = usePagedList<CampaignSummary>('/campaigns', ['status']);
  const status = params.get('status') ?? '';
  return (
    <>
      <h1>Campaigns</h1>
      <p><Link to="/campaigns/new">New campaign</Link></p>
      <StatusFilter id="cmp-status" statuses={STATUSES} />
      <PagedTable
        loaded={loaded}
        rowKey={(c) => c.id}
        empty={status ? `No ${status} campaigns.` : <>No campaigns yet. <Link to="/campaigns/new">Create a draft</Link>.</>}
        columns={[
          { header: 'Campaign', cell: (c) => <Link to={`/campaigns/${c.id}`}>{c.name}</Link> },
          { header: 'Status', cell: (c) => <Badge value={c.status} /> },
          { header: 'Scheduled', cell: (c) => <When at={c.scheduledAt} /> },
          { header: 'Created', cell: (c) => <When at={c.createdAt} /> },
        ]}
      />
    </>
  );
}

/** A draft with everything the API takes except custom headers: content from HTML or a template, merge-field defaults, reply-to, exclusions, a schedule, a throttle. */
export function NewCampaignPage() {
  const options = useLoad(async () => {
    const [lists, segments, templates] = await Promise.all([
      get<Page<NamedRow>>('/lists?limit=100'), get<Page<NamedRow>>('/segments?limit=100'), get<Page<NamedRow>>('/templates?limit=100'),
    ]);
    return { lists: lists.data, segments: segments.data, templates: templates.data };
  }, []);
  const [form, setForm] = useState({ name: '', subject: '', fromEmail: '', fromName: '', replyTo: '', html: '', templateId: '', variables: '', segment: '', throttle: '', tags: '', scheduledAt: '' });
  const [lists, setLists] = useState<string[]>([]);
  const [exclude, setExclude] = useState<string[]>([]);
  const [variablesError, setVariablesError] = useState<string | null>(null);
  const create = useAction();
  const navigate = useNavigate();
  const set = (k: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [k]: e.target.value });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    let variables: unknown;
    if (form.variables.trim()) {
      try { variables = JSON.parse(form.variables); } catch { variables = undefined; }
      if (variables === null || typeof variables !== 'object' || Array.isArray(variables)) {
        setVariablesError('Merge field defaults must be a JSON object, e.g. {"coupon": "WELCOME10"}.');
        return;
      }
    }
    setVariablesError(null);
    const body = {
      name: form.name,
      subject: form.subject,
      from: form.fromName ? { email: form.fromEmail, name: form.fromName } : { email: form.fromEmail },
      ...(form.replyTo ? { replyTo: form.replyTo } : {}),
      ...(form.html.trim() ? { html: form.html } : {}),
      ...(form.templateId ? { templateId: form.templateId } : {}),
      ...(variables ? { variables } : {}),
      audience: { lists, ...(form.segment ? { segment: form.segment } : {}), ...(exclude.length > 0 ? { excludeLists: exclude } : {}) },
      ...(form.tags.trim() ? { tags: form.tags.split(',').map((t) => t.trim()).filter(Boolean) } : {}),
      ...(form.throttle ? { throttle: Number(form.throttle) } : {}),
      // datetime-local is the browser's local time; the API takes an instant.
      ...(form.scheduledAt ? { scheduledAt: new Date(form.scheduledAt).toISOString() } : {}),
    };
    const c = await create.run(() => post<Campaign>('/campaigns', body));
    if (c) navigate(`/campaigns/${c.id}`);
  };
  return (
    <>
      <p><Link to="/campaigns">← Campaigns</Link></p>
      <h1>New campaign</h1>
      <Show loaded={options}>
        {(o) => (
          <form className="card" onSubmit={submit} aria-label="New campaign">
            <label htmlFor="c-name">Name</label>
            <input id="c-name" required maxLength={200} value={form.name} onChange={set('name')} />
            <label htmlFor="c-subject">Subject</label>
            <input id="c-subject" required value={form.subject} onChange={set('subject')} placeholder="News for {{ subscriber.name | you }}" />
            <div className="grid2">
              <div><label htmlFor="c-from">From address</label><input id="c-from" type="email" required value={form.fromEmail} onChange={set('fromEmail')} /></div>
              <div><label htmlFor="c-from-name">From name</label><input id="c-from-name" value={form.fromName} onChange={set('fromName')} /></div>
            </div>
            <label htmlFor="c-reply-to">Reply-to (optional)</label>
            <input id="c-reply-to" type="email" value={form.replyTo} onChange={set('replyTo')} />
            <fieldset>
              <legend>Lists</legend>
              {o.lists.length === 0 ? <p>No lists yet: <Link to="/lists">create one</Link> first.</p> : o.lists.map((l) => (
                <label key={l.id} className="check">
                  <input type="checkbox" checked={lists.includes(l.id)} onChange={(e) => setLists(e.target.checked ? [...lists, l.id] : lists.filter((x) => x !== l.id))} /> {l.name}
                </label>
              ))}
            </fieldset>
            <div className="grid2">
              <div>
                <label htmlFor="c-segment">Segment (optional)</label>
                <select id="c-segment" value={form.segment} onChange={set('segment')}>
                  <option value="">everyone in the lists</option>
                  {o.segments.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
                </select>
              </div>
              <div>
                <label htmlFor="c-exclude">Leave out members of (optional)</label>
                <select id="c-exclude" multiple value={exclude} onChange={(e) => setExclude(Array.from(e.target.selectedOptions, (opt) => opt.value))}>
                  {o.lists.map((l) => <option key={l.id} value={l.id}>{l.name}</option>)}
                </select>
              </div>
            </div>
            <label htmlFor="c-template">Template (optional: supplies the parts left empty here)</label>
            <select id="c-template" value={form.templateId} onChange={set('templateId')}>
              <option value="">none: write the HTML below</option>
              {o.templates.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
            </select>
            <label htmlFor="c-html">HTML</label>
            <textarea id="c-html" required={!form.templateId} rows={8} value={form.html} onChange={set('html')} placeholder={'<p>Hi {{ subscriber.name | there }}</p>'} />
            <label htmlFor="c-variables">Merge field defaults (JSON object, optional)</label>
            <textarea id="c-variables" rows={2} value={form.variables} onChange={set('variables')} placeholder={'{"coupon": "WELCOME10"}'} aria-invalid={variablesError ? true : undefined} aria-describedby={variablesError ? 'c-variables-error' : undefined} />
            {variablesError && <p id="c-variables-error" className="error" role="alert">{variablesError}</p>}
            <div className="grid2">
              <div><label htmlFor="c-tags">Tags (comma separated)</label><input id="c-tags" value={form.tags} onChange={set('tags')} /></div>
              <div><label htmlFor="c-throttle">Throttle (messages per minute, optional)</label><input id="c-throttle" type="number" min={1} max={100000} value={form.throttle} onChange={set('throttle')} /></div>
            </div>
            <label htmlFor="c-scheduled">Start at (optional; otherwise when you press Send)</label>
            <input id="c-scheduled" type="datetime-local" value={form.scheduledAt} onChange={set('scheduledAt')} />
            <button type="submit" disabled={create.busy}>Create draft</button>
            {create.error && <ErrorState error={create.error} />}
          </form>
        )}
      </Show>
    </>
  );
}

/** POST /campaigns/{id}/test: rendered copies to up to five addresses, with a sample subscriber. */
function TestSend({ id }: { id: string }) {
  const [to, setTo] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const action = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const addresses = to.split(/[\s,;]+/).filter(Boolean);
    if (await action.run(() => post(`/campaigns/${id}/test`, { to: addresses }))) setSent(`Test copies sent to ${addresses.join(', ')}.`);
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Send a test">
      <label htmlFor="c-test-to">Send a test to (up to 5 addresses)</label>
      <input id="c-test-to" required value={to} onChange={(e) => { setTo(e.target.value); setSent(null); }} placeholder="you@example.com, colleague@example.com" />
      <button type="submit" disabled={action.busy}>Send test</button>
      {sent && <p role="status">{sent}</p>}
      {action.error && <ErrorState error={action.error} />}
    </form>
  );
}

const live = (status: string) => status === 'sending' || status === 'scheduled';

export function CampaignPage() {
  const { id } = useParams();
  const campaign = useLoad(() => get<Campaign>(`/campaigns/${id}`), [id]);
  const action = useAction();
  const { reload } = campaign;
  const status = campaign.data?.status;
  // Live progress: poll the report while the campaign is under way.
  useEffect(() => {
    if (!status || !live(status)) return;
    const timer = setTimeout(reload, 1000);
    return () => clearTimeout(timer);
  }, [status, campaign.data, reload]);
  const [confirming, setConfirming] = useState(false);
  const [editing, setEditing] = useState(false);
  const [previewTick, setPreviewTick] = useState(0);
  const act = (verb: 'send' | 'pause' | 'resume' | 'cancel') => async () => {
    if (verb === 'cancel' && !confirm('Cancel this campaign? Unsent messages are removed.')) return;
    setConfirming(false);
    if (await action.run(() => post(`/campaigns/${id}/${verb}`))) reload();
  };
  return (
    <>
      <p><Link to="/campaigns">← Campaigns</Link></p>
      {campaign.error && !campaign.data ? <ErrorState error={campaign.error} onRetry={reload} /> : (
        <Show loaded={campaign}>
          {(c) => (
            <>
              <h1>{c.name} <Badge value={c.status} /></h1>
              <p className="muted">From {c.from.name ? `${c.from.name} <${c.from.email}>` : c.from.email} · subject “{c.subject}”{c.tags.length > 0 && ` · tags ${c.tags.join(', ')}`}{c.throttle && ` · ${c.throttle}/min`}</p>
              <div className="actions">
                {c.status === 'draft' && <button type="button" onClick={() => setConfirming(true)} disabled={action.busy || confirming}>{c.scheduledAt && new Date(c.scheduledAt) > new Date() ? 'Schedule' : 'Send now'}</button>}
                {c.status === 'draft' && <button type="button" onClick={() => setEditing((e) => !e)} aria-expanded={editing}>{editing ? 'Close editor' : 'Edit'}</button>}
                {c.status === 'sending' && <button type="button" onClick={act('pause')} disabled={action.busy}>Pause</button>}
                {c.status === 'paused' && <button type="button" onClick={act('resume')} disabled={action.busy}>Resume</button>}
                {['draft', 'scheduled', 'sending', 'paused'].includes(c.status) && <button type="button" className="danger" onClick={act('cancel')} disabled={action.busy}>Cancel campaign</button>}
              </div>
              {action.error && <ErrorState error={action.error} />}
              {c.scheduledAt && (c.status === 'draft' || c.status === 'scheduled') && <p className="muted">Starts <When at={c.scheduledAt} /></p>}
              {c.status === 'draft' && confirming && <SendConfirmation id={c.id} scheduled={!!c.scheduledAt && new Date(c.scheduledAt) > new Date()} onConfirm={act('send')} onCancel={() => setConfirming(false)} busy={action.busy} />}
              {c.status === 'draft' && editing && <CampaignEditForm c={c} onSaved={() => { reload(); setPreviewTick((t) => t + 1); }} />}
              {c.status === 'draft' && <CampaignPreview id={c.id} tick={previewTick} />}
              {c.status === 'draft' && <TestSend id={c.id} />}
              {c.pauseReason && <p className="error" role="status">Paused: {c.pauseReason.replaceAll('_', ' ')}.</p>}
              {c.status !== 'draft' && <CampaignProgress p={c.progress} status={c.status} />}
              {c.status !== 'draft' && <CampaignReport c={c} />}
            </>
          )}
        </Show>
      )}
    </>
  );
}

interface Preview { subscriber: { id: string; email: string; name: string | null }; subject: string; html: string | null; text: string | null; audience: { recipients: number; subscribers: number }; warnings: MergeWarning[] }

/** "Send to 1,204 recipients?": the count a send now reaches, asked for before anything goes out. */
function SendConfirmation({ id, scheduled, onConfirm, onCancel, busy }: { id: string; scheduled: boolean; onConfirm: () => void; onCancel: () => void; busy: boolean }) {
  const size = useLoad(() => get<Preview>(`/campaigns/${id}/preview`), [id]);
  return (
    <div className="confirm" role="alertdialog" aria-labelledby="confirm-h" data-testid="send-confirmation">
      <Show loaded={size}>
        {(p) => (
          <>
            <p id="confirm-h"><strong>{scheduled ? 'Schedule' : 'Send'} this campaign to {plural(p.audience.recipients, 'recipient')}?</strong> This cannot be undone once messages go out.</p>
            <button type="button" onClick={onConfirm} disabled={busy || p.audience.recipients === 0}>{scheduled ? 'Schedule' : 'Send'} to {plural(p.audience.recipients, 'recipient')}</button>
            <button type="button" className="danger" onClick={onCancel}>Not now</button>
          </>
        )}
      </Show>
    </div>
  );
}

/** The draft as one subscriber will get it (GET /campaigns/{id}/preview), at desktop or phone width, with the audience size. */
function CampaignPreview({ id, tick }: { id: string; tick: number }) {
  const [who, setWho] = useState('');
  const [asked, setAsked] = useState('');
  const [width, setWidth] = useState<'desktop' | 'mobile'>('desktop');
  const preview = useLoad(() => get<Preview>(`/campaigns/${id}/preview${qs({ subscriberId: asked || undefined })}`), [id, asked, tick]);
  return (
    <section className="card" aria-labelledby="cmp-preview-h">
      <h2 id="cmp-preview-h">Preview</h2>
      {preview.data && (
        <p className="audience-size" data-testid="audience-size">
          Sending now reaches <strong>{plural(preview.data.audience.recipients, 'recipient')}</strong>
          {preview.data.audience.subscribers !== preview.data.audience.recipients && <span className="muted"> (of {plural(preview.data.audience.subscribers, 'subscriber')} in the audience; the others are unsubscribed, bounced or suppressed)</span>}.
        </p>
      )}
      <form className="inline" onSubmit={(e) => { e.preventDefault(); setAsked(who.trim()); }} aria-label="Preview as">
        <div>
          <label htmlFor="cmp-preview-who">Preview as subscriber (email or id; empty = first of the audience)</label>
          <input id="cmp-preview-who" type="search" value={who} onChange={(e) => setWho(e.target.value)} />
        </div>
        <button type="submit">Show</button>
      </form>
      <PreviewWidths width={width} onChange={setWidth} />
      <Show loaded={preview}>
        {(p) => (
          <>
            <p data-testid="preview-recipient">For {p.subscriber.name ? `${p.subscriber.name} <${p.subscriber.email}>` : p.subscriber.email}</p>
            <MergeWarnings warnings={p.warnings} title="Check these merge fields" testId="campaign-warnings" />
            <p><strong>Subject:</strong> <span data-testid="campaign-preview-subject">{p.subject}</span></p>
            {p.html !== null && <iframe title="Campaign preview" sandbox="" srcDoc={p.html} className={`mail-frame ${width}`} />}
            {p.html === null && p.text !== null && <pre className="wrap">{p.text}</pre>}
          </>
        )}
      </Show>
    </section>
  );
}

/** Edits a draft's name, subject and content in place (PATCH); the answer's merge warnings show here. */
function CampaignEditForm({ c, onSaved }: { c: Campaign; onSaved: () => void }) {
  const [form, setForm] = useState({ name: c.name, subject: c.subject ?? '', html: c.html ?? '', text: c.text ?? '' });
  const [warnings, setWarnings] = useState<MergeWarning[]>([]);
  const [savedAt, setSavedAt] = useState<string | null>(null);
  const save = useAction();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await save.run(() => patch<{ updatedAt: string; warnings: MergeWarning[] }>(`/campaigns/${c.id}`, {
      name: form.name, subject: form.subject || undefined, html: form.html || null, text: form.text || null,
    }));
    if (r) { setWarnings(r.warnings); setSavedAt(r.updatedAt); onSaved(); }
  };
  return (
    <form className="card" onSubmit={submit} aria-label="Edit campaign">
      <h2>Edit draft</h2>
      <label htmlFor="ce-name">Campaign name</label>
      <input id="ce-name" required value={form.name} onChange={(e) => setForm({ ...form, name: e.target.value })} />
      <label htmlFor="ce-subject">Subject line</label>
      <input id="ce-subject" value={form.subject} onChange={(e) => setForm({ ...form, subject: e.target.value })} />
      {c.templateId === null && (
        <>
          <span className="label" aria-hidden="true">HTML body</span>
          <CodeEditor label="HTML body" value={form.html} onChange={(html) => setForm((f) => ({ ...f, html }))} />
          <label htmlFor="ce-text">Text body</label>
          <textarea id="ce-text" rows={4} value={form.text} onChange={(e) => setForm({ ...form, text: e.target.value })} />
        </>
      )}
      <button type="submit" disabled={save.busy}>Save draft</button>
      {savedAt && <p role="status" className="muted">Draft saved <When at={savedAt} /></p>}
      <MergeWarnings warnings={warnings} title="Check these merge fields" testId="edit-warnings" />
      {save.error && <ErrorState error={save.error} />}
    </form>
  );
}

function CampaignProgress({ p, status }: { p: Progress; status: string }) {
  // Floor, so 99.8 % does not read as done.
  const value = Math.floor(p.percent);
  return (
    <section className="card" aria-labelledby="progress-h">
      <h2 id="progress-h">Progress</h2>
      <label htmlFor="cmp-progress">{(p.recipients - p.remaining).toLocaleString('en')} of {plural(p.recipients, 'recipient')} done</label>
      <progress id="cmp-progress" max={100} value={value} data-testid="campaign-progress">{value}%</progress>
      <p aria-live="polite" data-testid="campaign-percent">
        {value} %{status === 'sending' && p.etaSeconds !== null && ` · about ${p.etaSeconds} s left`}
        {p.startedAt && <> · started <When at={p.startedAt} /></>}{p.finishedAt && <> · finished <When at={p.finishedAt} /></>}
      </p>
    </section>
  );
}

function CampaignReport({ c }: { c: Campaign }) {
  const k = c.counts;
  const stats: [string, number, string?][] = [
    ['Sent', k.sent], ['Delivered', k.delivered, pct(c.rates.delivery)], ['Opened', k.uniqueOpens, pct(c.rates.open)],
    ['Clicked', k.uniqueClicks, pct(c.rates.click)], ['Bounced', k.hardBounced + k.softBounced, pct(c.rates.bounce)],
    ['Complaints', k.complaints, pct(c.rates.complaint)], ['Unsubscribed', k.unsubscribes, pct(c.rates.unsubscribe)],
  ];
  return (
    <section aria-labelledby="report-h">
      <h2 id="report-h">Report</h2>
      <div className="stats" data-testid="campaign-report">
        {stats.map(([label, n, rate]) => <div className="stat" key={label}><strong>{n}</strong>{label}{rate && <span className="muted rate">{rate}</span>}</div>)}
      </div>
      <p className="muted">
        Opens {k.opens} ({k.machineOpens} by privacy proxies) · clicks {k.clicks} · click-to-open {pct(c.rates.clickToOpen)} · deferred {k.deferred} · cancelled {k.cancelled} ·
        skipped {Object.entries(k.skipped).map(([r, n]) => `${r} ${n}`).join(', ')}
      </p>
      <h3>Hourly activity</h3>
      {c.timeline.length === 0 ? <Empty>No activity yet.</Empty> : (
        <LineChart
          title="Hourly activity"
          points={c.timeline.map((t) => ({ x: t.hour, delivered: t.delivered, opens: t.opens, clicks: t.clicks, bounces: t.bounces }))}
          series={[{ key: 'delivered', label: 'Delivered', color: '#17663a' }, { key: 'opens', label: 'Opens', color: '#1f5fbf' }, { key: 'clicks', label: 'Clicks', color: '#7a3fb0' }, { key: 'bounces', label: 'Bounces', color: '#a31b1b' }]}
          xLabel={(x) => new Date(x).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit' })}
        />
      )}
      <h3>Top links</h3>
      {c.topLinks.length === 0 ? <Empty>No clicks yet.</Empty> : (
        <table data-testid="top-links">
          <thead><tr><th scope="col">Link</th><th scope="col">Clicks</th><th scope="col">Unique clicks</th></tr></thead>
          <tbody>{c.topLinks.map((l) => <tr key={l.url}><td className="wrap">{l.url}</td><td>{l.clicks}</td><td>{l.uniqueClicks}</td></tr>)}</tbody>
        </table>
      )}
      <p><Link to={`/campaigns/${c.id}/recipients`}>Recipients</Link></p>
    </section>
  );
}

type Recipient = Item<'listCampaignRecipients'>;
const RECIPIENT_STATUSES = ['queued', 'sending', 'delivered', 'deferred', 'bounced', 'failed', 'held'] as const;

export function CampaignRecipientsPage() {
  const { id } = useParams();
  const { loaded, params } = usePagedList<Recipient>(`/campaigns/${id}/recipients`, ['status']);
  const status = params.get('status') ?? '';
  return (
    <>
      <p><Link to={`/campaigns/${id}`}>← Campaign</Link></p>
      <h1>Recipients</h1>
      <StatusFilter id="rcp-status" statuses={RECIPIENT_STATUSES} />
      <PagedTable
        loaded={loaded}
        rowKey={(r) => r.messageId}
        empty={`No recipients${status ? ` with status ${status}` : ''}.`}
        columns={[
          { header: 'Address', className: 'wrap', cell: (r) => <Link to={`/messages/${r.messageId}`}>{r.email}</Link> },
          { header: 'Status', cell: (r) => <Badge value={r.status} /> },
          { header: 'Attempts', cell: (r) => r.attempts },
          { header: 'Delivered', cell: (r) => <When at={r.deliveredAt} /> },
        ]}
      />
    </>
  );
}
