import { useEffect, useState, type FormEvent } from 'react';
import { OPS } from '../components/rule-editor';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, del, get, patch, post, type Problem, type Item } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { ErrorState, Show, When, useAction, useLoad } from '../components/state';

interface Condition { field: string; op: string; value?: unknown }
/** The API's schema leaves a condition open (a condition or a nested group); the page edits flat ones. */
type Segment = Omit<Item<'listSegments'>, 'conditions'> & { conditions: Condition[] };

const FIELDS = ['email', 'name', 'status', 'createdAt', 'list', 'opened', 'clicked', 'received', 'attributes.'];
const NO_VALUE = new Set(['exists', 'not_exists']);
const NUMERIC = new Set(['within', 'not_within']);

export function SegmentsPage() {
  const { loaded: segments } = usePagedList<Segment>('/segments');
  return (
    <>
      <h1>Segments</h1>
      <p><Link to="/segments/new" className="button">New segment</Link></p>
      <PagedTable
        loaded={segments}
        rowKey={(s) => s.id}
        empty="No segments yet."
        columns={[
          { header: 'Segment', cell: (s) => <Link to={`/segments/${s.id}`}>{s.name}</Link> },
          { header: 'Matching now', cell: (s) => s.subscriberCount },
          { header: 'Updated', cell: (s) => <When at={s.updatedAt} /> },
        ]}
      />
    </>
  );
}

export function SegmentPage() {
  const { id } = useParams();
  const isNew = id === 'new';
  const loaded = useLoad(() => (isNew ? Promise.resolve(null) : get<Segment>(`/segments/${id}`)), [id]);
  return <Show loaded={loaded}>{(s) => <SegmentBuilder key={s?.id ?? 'new'} segment={s} />}</Show>;
}

function valueOf(c: Condition): string {
  if (c.value === undefined) return '';
  return Array.isArray(c.value) ? c.value.join(', ') : String(c.value);
}

/** A row with no field yet, an attribute path without its key, or an empty value its op needs. */
function isHalfTyped(r: { field: string; op: string; value: string }): boolean {
  const field = r.field.trim();
  if (field === '' || field.endsWith('.')) return true;
  return !NO_VALUE.has(r.op) && r.value.trim() === '';
}

function parseValue(op: string, raw: string): unknown {
  if (NO_VALUE.has(op)) return undefined;
  if (NUMERIC.has(op) || (['gt', 'gte', 'lt', 'lte'].includes(op) && raw.trim() !== '' && !Number.isNaN(Number(raw)))) return Number(raw);
  if (op === 'in') return raw.split(',').map((v) => v.trim()).filter(Boolean);
  return raw;
}

/** A rule builder: rows of field / op / value, match all or any, with a live count from POST /segments/count. */
function SegmentBuilder({ segment }: { segment: Segment | null }) {
  const [name, setName] = useState(segment?.name ?? '');
  const [match, setMatch] = useState<'all' | 'any'>(segment?.match ?? 'all');
  const [rows, setRows] = useState<{ field: string; op: string; value: string }[]>(
    segment ? segment.conditions.filter((c) => 'field' in c).map((c) => ({ field: c.field, op: c.op, value: valueOf(c) })) : [{ field: 'email', op: 'contains', value: '' }],
  );
  const [count, setCount] = useState<number | null>(null);
  const [countError, setCountError] = useState<Problem | null>(null);
  const save = useAction();
  const navigate = useNavigate();
  const conditions = rows.map((r) => ({ field: r.field, op: r.op, ...(NO_VALUE.has(r.op) ? {} : { value: parseValue(r.op, r.value) }) }));
  const key = JSON.stringify({ match, conditions });
  const drafting = rows.some(isHalfTyped);

  useEffect(() => {
    // A row still being typed is not asked about: the count would only be a 422 for the missing part.
    if (drafting) { setCount(null); setCountError(null); return; }
    let current = true;
    const timer = setTimeout(() => {
      post<{ subscriberCount: number }>('/segments/count', { match, conditions }).then(
        (r) => { if (current) { setCount(r.subscriberCount); setCountError(null); } },
        (e) => { if (current) { setCount(null); setCountError(e instanceof ApiError ? e.problem : null); } },
      );
    }, 300);
    // An answer for a rule that has changed since is dropped, so a slow count never overwrites a newer one.
    return () => { current = false; clearTimeout(timer); };
  }, [key]);

  const update = (i: number, k: 'field' | 'op' | 'value', v: string) => setRows(rows.map((r, j) => (j === i ? { ...r, [k]: v } : r)));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const s = await save.run(() => (segment ? patch<Segment>(`/segments/${segment.id}`, { name, match, conditions }) : post<Segment>('/segments', { name, match, conditions })));
    if (s) navigate(`/segments/${s.id}`, { replace: true });
  };
  return (
    <>
      <p><Link to="/segments">← Segments</Link></p>
      <h1>{segment ? segment.name : 'New segment'}</h1>
      <form className="card" onSubmit={submit} aria-label="Segment rules">
        <label htmlFor="seg-name">Name</label>
        <input id="seg-name" required value={name} onChange={(e) => setName(e.target.value)} />
        <label htmlFor="seg-match">Subscribers matching</label>
        <select id="seg-match" value={match} onChange={(e) => setMatch(e.target.value as 'all' | 'any')}>
          <option value="all">all of the conditions</option>
          <option value="any">any of the conditions</option>
        </select>
        <ol className="rules">
          {rows.map((r, i) => (
            <li key={i}>
              <label className="sr" htmlFor={`f-${i}`}>Field {i + 1}</label>
              <input id={`f-${i}`} list="seg-fields" value={r.field} onChange={(e) => update(i, 'field', e.target.value)} />
              <label className="sr" htmlFor={`o-${i}`}>Comparison {i + 1}</label>
              <select id={`o-${i}`} value={r.op} onChange={(e) => update(i, 'op', e.target.value)}>{OPS.map(([o, words]) => <option key={o} value={o}>{words}</option>)}</select>
              {!NO_VALUE.has(r.op) && (<><label className="sr" htmlFor={`v-${i}`}>Value {i + 1}</label><input id={`v-${i}`} value={r.value} onChange={(e) => update(i, 'value', e.target.value)} /></>)}
              <button type="button" className="link" aria-label={`Remove condition ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>Remove</button>
            </li>
          ))}
        </ol>
        <datalist id="seg-fields">{FIELDS.map((f) => <option key={f} value={f} />)}</datalist>
        <button type="button" onClick={() => setRows([...rows, { field: 'email', op: 'contains', value: '' }])}>Add condition</button>
        <p aria-live="polite" className="count" data-testid="segment-count">
          {count !== null ? <><strong>{count}</strong> {count === 1 ? 'subscriber matches' : 'subscribers match'} now</> : countError ? null : drafting ? 'Complete each condition to see how many subscribers match.' : 'Counting…'}
        </p>
        {countError && <ErrorState error={countError} />}
        <div className="actions">
          <button type="submit" disabled={save.busy}>Save segment</button>
          {segment && <button type="button" className="danger" onClick={() => confirm('Delete this segment?') && void save.run(() => del(`/segments/${segment.id}`)).then(() => navigate('/segments'))}>Delete</button>}
        </div>
        {save.error && <ErrorState error={save.error} />}
      </form>
    </>
  );
}
