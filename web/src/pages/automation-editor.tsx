import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, get, patch, post, type Page } from '../api';
import { RuleEditor, ruleForApi, type Rule } from '../components/rule-editor';
import { ErrorState, Show, useAction, useLoad } from '../components/state';

/**
 * Creating and editing an automation: trigger (event, optional filter), re-entry, and the steps
 * (send, wait, condition with nested then/else, update_subscriber, exit). Nothing is checked
 * here that the API checks: the 422's field errors are shown at the step they name
 * (`steps[2].then[0].from.email`), and the problem's title and detail above the form.
 */

type Step = { type: string; [key: string]: unknown };
interface FieldError { field: string; message: string }
interface Automation { id: string; name: string; status: 'active' | 'paused'; reentry: string; trigger: { event: string; filter: Rule | null }; steps: Step[] }
interface Named { id: string; name: string }

const STEP_TYPES = ['send', 'wait', 'condition', 'update_subscriber', 'exit'] as const;
const BUILT_IN_EVENTS = ['subscriber.created', 'email.opened', 'email.clicked', 'subscriber.unsubscribed'];
const NEW_STEP: Record<(typeof STEP_TYPES)[number], () => Step> = {
  send: () => ({ type: 'send', subject: '', html: '', from: { email: '' } }),
  wait: () => ({ type: 'wait', duration: '1d' }),
  condition: () => ({ type: 'condition', if: { match: 'all', conditions: [{ field: 'opened', op: 'exists' }] }, then: [], else: [] }),
  update_subscriber: () => ({ type: 'update_subscriber', lists: { add: [] } }),
  exit: () => ({ type: 'exit' }),
};

/** What the API gets: typed rule values converted, empty optional send fields left out. */
function stepsForApi(steps: Step[]): Step[] {
  return steps.map((s) => {
    switch (s.type) {
      case 'condition': return { type: 'condition', if: ruleForApi(s.if as Rule), then: stepsForApi(s.then as Step[]), else: stepsForApi(s.else as Step[]) };
      case 'send': {
        const from = s.from as { email: string; name?: string };
        const out: Step = { type: 'send', from: from.name ? from : { email: from.email } };
        if (s.templateId) out.templateId = s.templateId;
        else {
          out.subject = s.subject ?? '';
          if (s.html) out.html = s.html;
          if (s.text) out.text = s.text;
          if (!s.html && !s.text) out.html = '';
        }
        if (s.replyTo) out.replyTo = s.replyTo;
        return out;
      }
      default: return s;
    }
  });
}

/** The errors of the step at `at` itself: its fields, not those of the steps nested in it. */
function errorsAt(errors: FieldError[], at: string): FieldError[] {
  return errors.filter((e) => (e.field === at || e.field.startsWith(`${at}.`)) && !/^\.(then|else)\[\d+\]/.test(e.field.slice(at.length)));
}

export function AutomationEditorPage() {
  const { id } = useParams();
  const loaded = useLoad(async () => {
    const [automation, templates, lists] = await Promise.all([
      id ? get<Automation>(`/automations/${id}`) : Promise.resolve(null),
      get<Page<Named>>('/templates?limit=100'),
      get<Page<Named>>('/lists?limit=100'),
    ]);
    return { automation, templates: templates.data, lists: lists.data };
  }, [id]);
  return <Show loaded={loaded}>{(d) => <AutomationForm key={d.automation?.id ?? 'new'} automation={d.automation} templates={d.templates} lists={d.lists} />}</Show>;
}

function AutomationForm({ automation, templates, lists }: { automation: Automation | null; templates: Named[]; lists: Named[] }) {
  const [name, setName] = useState(automation?.name ?? '');
  const [event, setEvent] = useState(automation?.trigger.event ?? '');
  const [filter, setFilter] = useState<Rule | null>(automation?.trigger.filter ?? null);
  const [reentry, setReentry] = useState(automation?.reentry ?? 'after_exit');
  const [status, setStatus] = useState<'active' | 'paused'>(automation?.status ?? 'active');
  const [steps, setSteps] = useState<Step[]>(automation?.steps ?? [NEW_STEP.send()]);
  const save = useAction();
  const navigate = useNavigate();
  const errors = save.error instanceof ApiError ? save.error.problem.errors ?? [] : [];
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const body = { name, status, reentry, trigger: { event, filter: filter ? ruleForApi(filter) : null }, steps: stepsForApi(steps) };
    const saved = await save.run(() => (automation ? patch<Automation>(`/automations/${automation.id}`, body) : post<Automation>('/automations', body)));
    if (saved) navigate(`/automations/${saved.id}`);
  };
  return (
    <>
      <p><Link to={automation ? `/automations/${automation.id}` : '/automations'}>← {automation ? 'Automation' : 'Automations'}</Link></p>
      <h1>{automation ? `Edit ${automation.name}` : 'New automation'}</h1>
      <form onSubmit={submit} aria-label={automation ? 'Edit automation' : 'New automation'} noValidate>
        <div className="card">
          <label htmlFor="a-name">Name</label>
          <input id="a-name" value={name} onChange={(e) => setName(e.target.value)} />
          <FieldErrors errors={errors.filter((x) => x.field === 'name')} />
          <label htmlFor="a-event">Trigger event</label>
          <input id="a-event" list="a-events" value={event} onChange={(e) => setEvent(e.target.value)} placeholder="cart.abandoned" />
          <datalist id="a-events">{BUILT_IN_EVENTS.map((e) => <option key={e} value={e} />)}</datalist>
          <FieldErrors errors={errors.filter((x) => x.field.startsWith('trigger'))} />
          <label className="check">
            <input type="checkbox" checked={filter !== null} onChange={(e) => setFilter(e.target.checked ? { match: 'all', conditions: [{ field: 'email', op: 'contains', value: '' }] } : null)} /> Only when the trigger matches a rule
          </label>
          {filter && <RuleEditor rule={filter} onChange={setFilter} idBase="a-filter" legend="Trigger filter" />}
          <div className="grid2">
            <div>
              <label htmlFor="a-reentry">Re-entry</label>
              <select id="a-reentry" value={reentry} onChange={(e) => setReentry(e.target.value)}>
                <option value="after_exit">after the previous run ended</option>
                <option value="never">never (once per address)</option>
                <option value="always">always</option>
              </select>
            </div>
            <div>
              <label htmlFor="a-status">Status</label>
              <select id="a-status" value={status} onChange={(e) => setStatus(e.target.value as 'active' | 'paused')}>
                <option value="active">active</option>
                <option value="paused">paused</option>
              </select>
            </div>
          </div>
        </div>
        <h2>Steps</h2>
        <FieldErrors errors={errors.filter((x) => x.field === 'steps')} />
        <StepsEditor steps={steps} onChange={setSteps} at="steps" ctx={{ templates, lists, errors }} />
        {save.error && <ErrorState error={save.error} />}
        <div className="actions"><button type="submit" disabled={save.busy}>{automation ? 'Save automation' : 'Create automation'}</button></div>
      </form>
    </>
  );
}

/**
 * A position as people say it: `steps[2].then[0]` → "Step 3 › if yes › step 1", `steps` → "the
 * workflow". The API names fields by path; the editor speaks in steps and branches.
 */
export function placeName(at: string): string {
  if (at === 'steps') return 'the workflow';
  const parts = at.replace(/^steps/, '').match(/\.(then|else)|\[\d+\]|\.[A-Za-z_.]+/g) ?? [];
  const words: string[] = [];
  let first = true;
  for (const p of parts) {
    if (p === '.then') words.push('if yes');
    else if (p === '.else') words.push('if no');
    else if (p.startsWith('[')) { words.push(`${first ? 'Step' : 'step'} ${Number(p.slice(1, -1)) + 1}`); first = false; }
    else words.push(p.slice(1).replaceAll('.', ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase());
  }
  return words.join(' › ');
}

/** Where a new step goes: "Add a step to the workflow", "… to Step 3 › if yes". */
function branchName(at: string): string {
  return at === 'steps' ? 'the workflow' : placeName(at);
}

function FieldErrors({ errors }: { errors: FieldError[] }) {
  if (errors.length === 0) return null;
  return <ul className="field-errors">{errors.map((e, i) => <li key={i}><strong>{/^steps/.test(e.field) ? placeName(e.field) : e.field}</strong>: {e.message}</li>)}</ul>;
}

/** What each kind of step does, in words. */
const STEP_LABELS: Record<(typeof STEP_TYPES)[number], string> = {
  send: 'Send an email',
  wait: 'Wait',
  condition: 'Check a condition (if / else)',
  update_subscriber: 'Update the subscriber',
  exit: 'End the run',
};

interface Ctx { templates: Named[]; lists: Named[]; errors: FieldError[] }

function StepsEditor({ steps, onChange, at, ctx }: { steps: Step[]; onChange: (s: Step[]) => void; at: string; ctx: Ctx }) {
  const [adding, setAdding] = useState<(typeof STEP_TYPES)[number]>('send');
  const move = (i: number, by: number) => {
    const next = [...steps];
    [next[i], next[i + by]] = [next[i + by], next[i]];
    onChange(next);
  };
  return (
    <div className="steps-editor">
      {steps.length === 0 && <p className="muted">No steps.</p>}
      <ol className="steps">
        {steps.map((s, i) => (
          <li key={`${at}[${i}]`}>
            <StepEditor
              step={s}
              at={`${at}[${i}]`}
              ctx={ctx}
              onChange={(n) => onChange(steps.map((x, j) => (j === i ? n : x)))}
              actions={
                <div className="actions">
                  <button type="button" className="link" disabled={i === 0} onClick={() => move(i, -1)} aria-label={`Move ${placeName(`${at}[${i}]`)} up`}>Up</button>
                  <button type="button" className="link" disabled={i === steps.length - 1} onClick={() => move(i, 1)} aria-label={`Move ${placeName(`${at}[${i}]`)} down`}>Down</button>
                  <button type="button" className="link" onClick={() => onChange(steps.filter((_, j) => j !== i))} aria-label={`Remove ${placeName(`${at}[${i}]`)}`}>Remove</button>
                </div>
              }
            />
          </li>
        ))}
      </ol>
      <div className="inline">
        <div>
          <label htmlFor={`${at}-add`}>Kind of step to add to {branchName(at)}</label>
          <select id={`${at}-add`} value={adding} onChange={(e) => setAdding(e.target.value as (typeof STEP_TYPES)[number])}>
            {STEP_TYPES.map((t) => <option key={t} value={t}>{STEP_LABELS[t]}</option>)}
          </select>
        </div>
        <button type="button" onClick={() => onChange([...steps, NEW_STEP[adding]()])}>Add a step to {branchName(at)}</button>
      </div>
    </div>
  );
}

function StepEditor({ step, at, ctx, onChange, actions }: { step: Step; at: string; ctx: Ctx; onChange: (s: Step) => void; actions: React.ReactNode }) {
  const id = at.replace(/[^A-Za-z0-9]+/g, '-');
  const set = (patchValue: Record<string, unknown>) => onChange({ ...step, ...patchValue });
  const input = (label: string, key: string, value: unknown, apply: (v: string) => Record<string, unknown>, placeholder?: string) => (
    <div>
      <label htmlFor={`${id}-${key}`}>{label}</label>
      <input id={`${id}-${key}`} value={String(value ?? '')} placeholder={placeholder} onChange={(e) => set(apply(e.target.value))} />
    </div>
  );
  const mine = errorsAt(ctx.errors, at);
  let body: React.ReactNode = null;
  switch (step.type) {
    case 'send': {
      const from = (step.from as { email: string; name?: string } | undefined) ?? { email: '' };
      body = (
        <>
          <label htmlFor={`${id}-template`}>Template</label>
          <select id={`${id}-template`} value={String(step.templateId ?? '')} onChange={(e) => set({ templateId: e.target.value || undefined })}>
            <option value="">none: write the message here</option>
            {ctx.templates.map((t) => <option key={t.id} value={t.id}>{t.name}</option>)}
          </select>
          {!step.templateId && (
            <>
              {input('Subject', 'subject', step.subject, (v) => ({ subject: v }), 'Welcome, {{ subscriber.name | there }}')}
              <label htmlFor={`${id}-html`}>HTML</label>
              <textarea id={`${id}-html`} rows={4} value={String(step.html ?? '')} onChange={(e) => set({ html: e.target.value })} />
            </>
          )}
          <div className="grid2">
            {input('From address', 'from', from.email, (v) => ({ from: { ...from, email: v } }))}
            {input('From name', 'from-name', from.name, (v) => ({ from: { ...from, name: v || undefined } }))}
          </div>
        </>
      );
      break;
    }
    case 'wait': {
      const until = step.until as { event: string; timeout: string } | undefined;
      body = (
        <>
          <label htmlFor={`${id}-mode`}>Wait for</label>
          <select id={`${id}-mode`} value={until ? 'event' : 'duration'} onChange={(e) => onChange(e.target.value === 'event' ? { type: 'wait', until: { event: '', timeout: '7d' } } : { type: 'wait', duration: '1d' })}>
            <option value="duration">a time</option>
            <option value="event">an event, at most a time</option>
          </select>
          {until ? (
            <div className="grid2">
              {input('Event', 'event', until.event, (v) => ({ until: { ...until, event: v } }), 'order.completed')}
              {input('Timeout (e.g. 7d)', 'timeout', until.timeout, (v) => ({ until: { ...until, timeout: v } }))}
            </div>
          ) : input('Duration (30s, 15m, 3h, 2d)', 'duration', step.duration, (v) => ({ duration: v }))}
        </>
      );
      break;
    }
    case 'condition':
      body = (
        <>
          <RuleEditor rule={step.if as Rule} onChange={(r) => set({ if: r })} idBase={`${id}-if`} legend="If" />
          <h4>Then</h4>
          <StepsEditor steps={(step.then as Step[]) ?? []} onChange={(s) => set({ then: s })} at={`${at}.then`} ctx={ctx} />
          <h4>Else</h4>
          <StepsEditor steps={(step.else as Step[]) ?? []} onChange={(s) => set({ else: s })} at={`${at}.else`} ctx={ctx} />
        </>
      );
      break;
    case 'update_subscriber': {
      const lists = (step.lists as { add?: string[]; remove?: string[] } | undefined) ?? {};
      const attributes = (step.attributes as Record<string, unknown> | undefined) ?? undefined;
      const toggle = (side: 'add' | 'remove', listId: string, on: boolean) => {
        const current = lists[side] ?? [];
        set({ lists: { ...lists, [side]: on ? [...current, listId] : current.filter((x) => x !== listId) } });
      };
      body = (
        <>
          {(['add', 'remove'] as const).map((side) => (
            <fieldset key={side}>
              <legend>{side === 'add' ? 'Add to lists' : 'Remove from lists'}</legend>
              {ctx.lists.length === 0 ? <p className="muted">No lists.</p> : ctx.lists.map((l) => (
                <label className="check" key={l.id}>
                  <input type="checkbox" checked={(lists[side] ?? []).includes(l.id)} onChange={(e) => toggle(side, l.id, e.target.checked)} /> {l.name}
                </label>
              ))}
            </fieldset>
          ))}
          <AttributeLines id={`${id}-attributes`} value={attributes} onChange={(a) => set({ attributes: a })} />
        </>
      );
      break;
    }
    case 'exit':
      body = <p className="muted">The run ends here.</p>;
      break;
    default:
      body = <p className="muted wrap">{JSON.stringify(step)}</p>;
  }
  return (
    <fieldset className="step card" data-testid={`step-${at}`}>
      <legend>{placeName(at)}: {STEP_LABELS[step.type as (typeof STEP_TYPES)[number]] ?? step.type}</legend>
      <label htmlFor={`${id}-type`}>Step type</label>
      <select id={`${id}-type`} value={step.type} onChange={(e) => onChange(NEW_STEP[e.target.value as (typeof STEP_TYPES)[number]]())}>
        {STEP_TYPES.map((t) => <option key={t} value={t}>{STEP_LABELS[t]}</option>)}
      </select>
      {body}
      {mine.length > 0 && <div className="error" data-testid="step-errors"><FieldErrors errors={mine} /></div>}
      {actions}
    </fieldset>
  );
}

/** Attributes to set, one `key=value` per line (values are strings); empty: leave them alone. */
function AttributeLines({ id, value, onChange }: { id: string; value: Record<string, unknown> | undefined; onChange: (v: Record<string, unknown> | undefined) => void }) {
  const [text, setText] = useState(() => Object.entries(value ?? {}).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join('\n'));
  return (
    <>
      <label htmlFor={id}>Set attributes (one key=value per line)</label>
      <textarea id={id} rows={2} value={text} onChange={(e) => {
        setText(e.target.value);
        const lines = e.target.value.split('\n').map((l) => l.trim()).filter(Boolean);
        onChange(lines.length === 0 ? undefined : Object.fromEntries(lines.map((l) => {
          const at = l.indexOf('=');
          return at < 0 ? [l, ''] : [l.slice(0, at).trim(), l.slice(at + 1).trim()];
        })));
      }} placeholder="plan=pro" />
    </>
  );
}
