import { Link, useParams } from 'react-router';
import { get, patch, post, type Answer, type Item } from '../api';
import { PagedTable, StatusFilter, usePagedList } from '../components/paged-table';
import { Badge, Empty, ErrorState, Show, When, useAction, useLoad } from '../components/state';

interface Step { type: string; [key: string]: unknown }
type SendCounters = Automation['counters']['sends'][number];
/** The API's schema leaves a step open (its fields depend on its type). */
type Automation = Omit<Item<'listAutomations'>, 'steps'> & { steps: Step[] };
type Run = Item<'listAutomationRuns'>;
type RunDetail = Answer<'getAutomationRun'>;

const RUN_STATUSES = ['active', 'waiting', 'completed', 'exited', 'failed'] as const;

export function AutomationsPage() {
  const { loaded } = usePagedList<Automation>('/automations');
  return (
    <>
      <h1>Automations</h1>
      <p><Link to="/automations/new">New automation</Link></p>
      <PagedTable
        loaded={loaded}
        rowKey={(a) => a.id}
        empty={<>No automations yet. <Link to="/automations/new">Create one</Link>.</>}
        columns={[
          { header: 'Automation', cell: (a) => <Link to={`/automations/${a.id}`}>{a.name}</Link> },
          { header: 'Status', cell: (a) => <Badge value={a.status} /> },
          { header: 'Trigger', cell: (a) => <code>{a.trigger.event}</code> },
          { header: 'In progress', cell: (a) => a.counters.runsInProgress },
          { header: 'Started', cell: (a) => a.counters.runsStarted },
        ]}
      />
    </>
  );
}

/** One line per step, in the words of docs/automations.md; branches nest. */
function describe(s: Step): string {
  switch (s.type) {
    case 'send': {
      const from = (s.from as { email?: string } | undefined)?.email;
      return `Send ${s.templateId ? `template ${String(s.templateId)}` : `“${String(s.subject ?? '')}”`}${from ? ` from ${from}` : ''}`;
    }
    case 'wait': {
      const until = s.until as { event?: string; timeout?: string } | undefined;
      return until ? `Wait for ${until.event ?? ''} (at most ${until.timeout ?? ''})` : `Wait ${String(s.duration ?? '')}`;
    }
    case 'condition': return `If ${JSON.stringify(s.if)}`;
    case 'update_subscriber': return `Update the subscriber ${JSON.stringify({ lists: s.lists, attributes: s.attributes })}`;
    case 'exit': return 'Exit';
    default: return s.type;
  }
}

function StepList({ steps, path, sends }: { steps: Step[]; path: string; sends: Map<string, SendCounters> }) {
  if (steps.length === 0) return <p className="muted">No steps.</p>;
  return (
    <ol className="steps">
      {steps.map((s, i) => {
        const at = `${path}[${i}]`;
        const c = sends.get(at);
        return (
          <li key={at}>
            <span className="wrap">{describe(s)}</span> <code className="muted">{at}</code>
            {c && <p className="muted" data-testid="send-counters">sent {c.sent} · skipped {c.skipped} · delivered {c.delivered} · opened {c.opened} · clicked {c.clicked}</p>}
            {s.type === 'condition' && (
              <>
                <p>Then:</p><StepList steps={(s.then as Step[]) ?? []} path={`${at}.then`} sends={sends} />
                <p>Else:</p><StepList steps={(s.else as Step[]) ?? []} path={`${at}.else`} sends={sends} />
              </>
            )}
          </li>
        );
      })}
    </ol>
  );
}

export function AutomationPage() {
  const { id } = useParams();
  const automation = useLoad(() => get<Automation>(`/automations/${id}`), [id]);
  const action = useAction();
  const toggle = (a: Automation) => async () => {
    if (await action.run(() => patch(`/automations/${a.id}`, { status: a.status === 'active' ? 'paused' : 'active' }))) automation.reload();
  };
  return (
    <>
      <p><Link to="/automations">← Automations</Link></p>
      <Show loaded={automation}>
        {(a) => (
          <>
            <h1>{a.name} <Badge value={a.status} /></h1>
            <p className="muted">Triggered by <code>{a.trigger.event}</code>{a.trigger.filter ? <> when <code className="wrap">{JSON.stringify(a.trigger.filter)}</code></> : null} · re-entry {a.reentry.replaceAll('_', ' ')}</p>
            <div className="actions">
              <button type="button" onClick={toggle(a)} disabled={action.busy}>{a.status === 'active' ? 'Pause automation' : 'Activate automation'}</button>
              <Link to={`/automations/${a.id}/edit`}>Edit</Link>
              <Link to={`/automations/${a.id}/runs`}>Runs</Link>
            </div>
            {action.error && <ErrorState error={action.error} />}
            <div className="stats" data-testid="automation-counters">
              {([['Started', a.counters.runsStarted], ['In progress', a.counters.runsInProgress], ['Completed', a.counters.runsCompleted], ['Exited', a.counters.runsExited], ['Failed', a.counters.runsFailed]] as const).map(([label, n]) => (
                <div className="stat" key={label}><strong>{n}</strong>{label}</div>
              ))}
            </div>
            <h2>Steps</h2>
            <StepList steps={a.steps} path="steps" sends={new Map(a.counters.sends.map((c) => [c.step, c]))} />
          </>
        )}
      </Show>
    </>
  );
}

export function AutomationRunsPage() {
  const { id } = useParams();
  const { loaded, params } = usePagedList<Run>(`/automations/${id}/runs`, ['status']);
  const status = params.get('status') ?? '';
  return (
    <>
      <p><Link to={`/automations/${id}`}>← Automation</Link></p>
      <h1>Runs</h1>
      <StatusFilter id="run-status" statuses={RUN_STATUSES} />
      <PagedTable
        loaded={loaded}
        rowKey={(r) => r.id}
        empty={`No runs${status ? ` with status ${status}` : ''}.`}
        columns={[
          { header: 'Address', className: 'wrap', cell: (r) => <Link to={`/automations/${id}/runs/${r.id}`}>{r.email}</Link> },
          { header: 'Status', cell: (r) => <Badge value={r.status} /> },
          { header: 'Next step', cell: (r) => (r.position ? <code>{r.position}</code> : '—') },
          { header: 'Wakes', cell: (r) => <>{r.waitingFor ? <>{r.waitingFor} or </> : null}<When at={r.wakesAt} /></> },
          { header: 'Started', cell: (r) => <When at={r.startedAt} /> },
        ]}
      />
    </>
  );
}

export function AutomationRunPage() {
  const { id, runId } = useParams();
  const run = useLoad(() => get<RunDetail>(`/automations/${id}/runs/${runId}`), [id, runId]);
  const action = useAction();
  const cancel = async () => {
    if (!confirm('Cancel this run?')) return;
    if (await action.run(() => post(`/automations/${id}/runs/${runId}/cancel`))) run.reload();
  };
  return (
    <>
      <p><Link to={`/automations/${id}/runs`}>← Runs</Link></p>
      <Show loaded={run}>
        {(r) => (
          <>
            <h1 className="wrap">{r.email} <Badge value={r.status} /></h1>
            <p className="muted">
              Started <When at={r.startedAt} />{r.finishedAt && <> · finished <When at={r.finishedAt} /></>}
              {r.position && <> · next step <code>{r.position}</code></>}
              {r.wakesAt && <> · wakes <When at={r.wakesAt} /></>}{r.waitingFor && <> or on <code>{r.waitingFor}</code></>}
              {r.exitReason && <> · exit: {r.exitReason}</>}
            </p>
            {(r.status === 'active' || r.status === 'waiting') && <div className="actions"><button type="button" className="danger" onClick={cancel} disabled={action.busy}>Cancel run</button></div>}
            {action.error && <ErrorState error={action.error} />}
            <h2>History</h2>
            {r.steps.length === 0 ? <Empty>No step performed yet.</Empty> : (
              <ol className="timeline" data-testid="run-history">
                {r.steps.map((s, i) => (
                  <li key={i}>
                    <When at={s.at} /> <code>{s.step}</code> {s.type}: <Badge value={s.outcome} />
                    {s.messageId && <> <Link to={`/messages/${s.messageId}`}>message</Link></>}
                    {Object.keys(s.detail).length > 0 && <span className="muted wrap"> {JSON.stringify(s.detail)}</span>}
                  </li>
                ))}
              </ol>
            )}
            <h2>Trigger data</h2>
            <pre className="wrap">{JSON.stringify(r.data, null, 2)}</pre>
          </>
        )}
      </Show>
    </>
  );
}
