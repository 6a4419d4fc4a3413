/** A rule as the API takes it ({match, conditions}); leaf conditions are edited as rows, nested groups are kept as they are. */
export interface Rule { match: 'all' | 'any'; conditions: RuleItem[] }
export type RuleItem = { field: string; op: string; value?: unknown } | Rule;

/** The API's operators (the option values) and how a person reads each (the option labels). */
export const OPS: [string, string][] = [
  ['eq', 'is'], ['neq', 'is not'], ['contains', 'contains'], ['starts_with', 'starts with'], ['gt', 'is more than'], ['gte', 'is at least'],
  ['lt', 'is less than'], ['lte', 'is at most'], ['in', 'is one of (comma separated)'], ['exists', 'is set'], ['not_exists', 'is not set'],
  ['within', 'is within the last (days)'], ['not_within', 'is not within the last (days)'],
];
/** The fields' names in words; the value stays the API's path. */
const FIELD_LABELS: Record<string, string> = {
  'data.': 'trigger data: data.<key>', email: 'email address', name: 'name', status: 'subscriber status', createdAt: 'subscribed on',
  list: 'in list (list id)', 'attributes.': 'attribute: attributes.<key>', opened: 'opened the last email', clicked: 'clicked the last email', wait: 'the wait ended by (event or timeout)',
};
const NO_VALUE = new Set(['exists', 'not_exists']);
const NUMERIC = new Set(['within', 'not_within']);
/** docs/automations.md: the fields an automation's rules may name. */
const FIELDS = ['data.', 'email', 'name', 'status', 'createdAt', 'list', 'attributes.', 'opened', 'clicked', 'wait'];

const isGroup = (c: RuleItem): c is Rule => 'conditions' in c;

/** The value as typed → the JSON value the op takes (numbers for within/gt…, a list for in). */
export function ruleValue(op: string, raw: unknown): unknown {
  if (NO_VALUE.has(op)) return undefined;
  if (typeof raw !== 'string') return raw;
  if (NUMERIC.has(op) || (['gt', 'gte', 'lt', 'lte'].includes(op) && raw.trim() !== '' && !Number.isNaN(Number(raw)))) return Number(raw);
  if (op === 'in') return raw.split(',').map((v) => v.trim()).filter(Boolean);
  return raw;
}

/** The rule with every typed value turned into what the API takes. */
export function ruleForApi(rule: Rule): Rule {
  return {
    match: rule.match,
    conditions: rule.conditions.map((c) => (isGroup(c) ? ruleForApi(c) : { field: c.field, op: c.op, ...(NO_VALUE.has(c.op) ? {} : { value: ruleValue(c.op, c.value ?? '') }) })),
  };
}

const shown = (v: unknown) => (v === undefined ? '' : Array.isArray(v) ? v.join(', ') : String(v));

/** Rows of field / op / value under "all" or "any"; `idBase` keeps labels unique on a page with several rules. */
export function RuleEditor({ rule, onChange, idBase, legend }: { rule: Rule; onChange: (r: Rule) => void; idBase: string; legend: string }) {
  const set = (i: number, patch: Record<string, unknown>) => onChange({ ...rule, conditions: rule.conditions.map((c, j) => (j === i ? { ...c, ...patch } as RuleItem : c)) });
  return (
    <fieldset className="rule">
      <legend>{legend}</legend>
      <label htmlFor={`${idBase}-match`}>Match</label>
      <select id={`${idBase}-match`} value={rule.match} onChange={(e) => onChange({ ...rule, match: e.target.value as 'all' | 'any' })}>
        <option value="all">all conditions</option>
        <option value="any">any condition</option>
      </select>
      <datalist id={`${idBase}-fields`}>{FIELDS.map((f) => <option key={f} value={f} label={FIELD_LABELS[f]} />)}</datalist>
      {rule.conditions.map((c, i) => isGroup(c) ? (
        <p key={i} className="muted wrap">Group (edit through the API): <code>{JSON.stringify(c)}</code></p>
      ) : (
        <div className="condition-row" key={i}>
          <div><label htmlFor={`${idBase}-f${i}`}>Field {i + 1}</label><input id={`${idBase}-f${i}`} list={`${idBase}-fields`} value={c.field} onChange={(e) => set(i, { field: e.target.value })} /></div>
          <div>
            <label htmlFor={`${idBase}-o${i}`}>Comparison {i + 1}</label>
            <select id={`${idBase}-o${i}`} value={c.op} onChange={(e) => set(i, { op: e.target.value })}>{OPS.map(([o, words]) => <option key={o} value={o}>{words}</option>)}</select>
          </div>
          {!NO_VALUE.has(c.op) && <div><label htmlFor={`${idBase}-v${i}`}>Value {i + 1}</label><input id={`${idBase}-v${i}`} value={shown(c.value)} onChange={(e) => set(i, { value: e.target.value })} /></div>}
          <button type="button" className="link" aria-label={`Remove condition ${i + 1}`} onClick={() => onChange({ ...rule, conditions: rule.conditions.filter((_, j) => j !== i) })}>Remove</button>
        </div>
      ))}
      <button type="button" onClick={() => onChange({ ...rule, conditions: [...rule.conditions, { field: 'email', op: 'contains', value: '' }] })}>Add condition</button>
    </fieldset>
  );
}
