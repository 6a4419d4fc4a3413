import { useEffect, useState, type FormEvent } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { ApiError, del, get, patch, post, qs, type Problem, type Answer } from '../api';
import { PagedTable, usePagedList } from '../components/paged-table';
import { CodeEditor } from '../components/code-editor';
import { MergeWarnings, PreviewWidths, type MergeWarning } from '../components/merge-warnings';
import { ErrorState, Show, When, useAction, useLoad } from '../components/state';

type Template = Answer<'getTemplate'>;
type Rendered = Answer<'renderTemplate'>;

export function TemplatesPage() {
  const [, setParams] = useSearchParams();
  const { loaded: templates, params } = usePagedList<Template>('/templates', ['folder', 'q']);
  const folder = params.get('folder');
  const q = params.get('q') ?? '';
  const folders = useLoad(() => get<{ data: { folder: string | null; count: number }[] }>('/templates/folders'), []);
  const [name, setName] = useState('');
  const create = useAction();
  const navigate = useNavigate();
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const t = await create.run(() => post<Template>('/templates', { name, folder, subject: 'Hello {{ name | there }}', html: '<p>Hello {{ name | there }}!</p>' }));
    if (t) navigate(`/templates/${t.id}`);
  };
  return (
    <>
      <h1>Templates</h1>
      <form className="card inline" onSubmit={submit} aria-label="New template">
        <div>
          <label htmlFor="tpl-name">New template name</label>
          <input id="tpl-name" required value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <button type="submit" disabled={create.busy}>Create template</button>
      </form>
      {create.error && <ErrorState error={create.error} />}
      <div className="split">
        <nav aria-label="Folders" className="folders">
          <h2>Folders</h2>
          <ul>
            <li><Link to="/templates" aria-current={!folder ? 'page' : undefined}>All templates</Link></li>
            {folders.data?.data.filter((f) => f.folder).map((f) => (
              <li key={f.folder}><Link to={`/templates${qs({ folder: f.folder })}`} aria-current={folder === f.folder ? 'page' : undefined}>{f.folder} ({f.count})</Link></li>
            ))}
          </ul>
        </nav>
        <section>
          <form role="search" onSubmit={(e) => { e.preventDefault(); const v = new FormData(e.currentTarget).get('q'); setParams(qs({ folder, q: String(v ?? '') }).slice(1)); }}>
            <label htmlFor="tpl-q">Search templates</label>
            <input id="tpl-q" name="q" defaultValue={q} type="search" />
            <button type="submit">Search</button>
          </form>
          <PagedTable
            loaded={templates}
            rowKey={(t) => t.id}
            empty="No templates here yet."
            columns={[
              { header: 'Name', cell: (t) => <Link to={`/templates/${t.id}`}>{t.name}</Link> },
              { header: 'Folder', cell: (t) => t.folder ?? '—' },
              { header: 'Subject', className: 'wrap', cell: (t) => t.subject ?? '' },
              { header: 'Updated', cell: (t) => <When at={t.updatedAt} /> },
            ]}
          />
        </section>
      </div>
    </>
  );
}

/** Editor with live preview through POST /templates/{id}/render; template errors show line and column. */
export function TemplatePage() {
  const { id } = useParams();
  const loaded = useLoad(() => get<Template>(`/templates/${id}`), [id]);
  return <Show loaded={loaded}>{(t) => <TemplateEditor key={t.id} template={t} />}</Show>;
}

function TemplateEditor({ template }: { template: Template }) {
  const [draft, setDraft] = useState({ name: template.name, folder: template.folder ?? '', subject: template.subject ?? '', html: template.html ?? '', text: template.text ?? '' });
  const [variables, setVariables] = useState('{\n  "name": "Ada"\n}');
  const [saved, setSaved] = useState<string | null>(null);
  const [preview, setPreview] = useState<Rendered | null>(null);
  const [saveWarnings, setSaveWarnings] = useState<MergeWarning[]>(template.warnings ?? []);
  const [subscriber, setSubscriber] = useState('');
  const [width, setWidth] = useState<'desktop' | 'mobile'>('desktop');
  const [previewError, setPreviewError] = useState<Problem | null>(null);
  const save = useAction();
  const navigate = useNavigate();
  const set = (k: keyof typeof draft) => (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value });

  // Live preview: the draft as typed, rendered by POST /templates/{id}/render with the sample
  // variables (debounced); nothing is saved until "Save". An answer for text that has changed
  // since is dropped, so a slow render never overwrites a newer one.
  const [renderTick, setRenderTick] = useState(0);
  const draftParts = { subject: draft.subject || null, html: draft.html || null, text: draft.text || null };
  const renderKey = JSON.stringify([draftParts, variables, subscriber]);
  useEffect(() => {
    let vars: unknown;
    try {
      vars = JSON.parse(variables);
    } catch {
      setPreviewError({ title: 'Variables are not JSON', status: 0, detail: 'Fix the sample variables to see the preview.' });
      return;
    }
    if (vars === null || typeof vars !== 'object' || Array.isArray(vars)) {
      setPreviewError({ title: 'Variables are not an object', status: 0, detail: 'The sample variables are a JSON object, as in POST /api/v1/emails.' });
      return;
    }
    let current = true;
    const timer = setTimeout(async () => {
      try {
        const rendered = await post<Rendered>(`/templates/${template.id}/render`, { variables: vars, draft: draftParts, ...(subscriber.includes('@') || subscriber.startsWith('sub_') ? { subscriberId: subscriber.trim() } : {}) });
        if (current) { setPreview(rendered); setPreviewError(null); }
      } catch (e) {
        if (current) setPreviewError(e instanceof ApiError ? e.problem : { title: 'Preview failed', status: 0, detail: String(e) });
      }
    }, 300);
    return () => { current = false; clearTimeout(timer); };
  }, [renderKey, renderTick, template.id]);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await save.run(() => patch<Template>(`/templates/${template.id}`, {
      name: draft.name, folder: draft.folder || null, subject: draft.subject || null, html: draft.html || null, text: draft.text || null,
    }));
    if (r) {
      setSaved(r.updatedAt);
      setSaveWarnings(r.warnings ?? []);
      setRenderTick((t) => t + 1);
    }
  };
  return (
    <>
      <p><Link to="/templates">← Templates</Link></p>
      <h1>{draft.name}</h1>
      <div className="editor">
        <form onSubmit={submit} className="card" aria-label="Template">
          <label htmlFor="t-name">Name</label>
          <input id="t-name" required value={draft.name} onChange={set('name')} />
          <label htmlFor="t-folder">Folder</label>
          <input id="t-folder" value={draft.folder} onChange={set('folder')} />
          <label htmlFor="t-subject">Subject</label>
          <input id="t-subject" value={draft.subject} onChange={set('subject')} />
          <span className="label" aria-hidden="true">HTML</span>
          <CodeEditor label="HTML" value={draft.html} onChange={(html) => setDraft((d) => ({ ...d, html }))} />
          <label htmlFor="t-text">Text</label>
          <textarea id="t-text" rows={5} value={draft.text} onChange={set('text')} spellCheck={false} />
          <label htmlFor="t-vars">Sample variables (JSON)</label>
          <textarea id="t-vars" rows={4} value={variables} onChange={(e) => setVariables(e.target.value)} spellCheck={false} />
          <div className="actions">
            <button type="submit" disabled={save.busy}>Save</button>
            <button type="button" className="danger" onClick={() => confirm('Delete this template?') && void save.run(() => del(`/templates/${template.id}`)).then(() => navigate('/templates'))}>Delete</button>
          </div>
          {saved && <p role="status" className="muted">Saved <When at={saved} /></p>}
          <MergeWarnings warnings={saveWarnings} title="Check these merge fields" testId="save-warnings" />
          {save.error && <ErrorState error={save.error} />}
        </form>
        <section aria-labelledby="preview-h" className="card preview">
          <h2 id="preview-h">Preview</h2>
          <label htmlFor="t-subscriber">Preview as subscriber (email or id, optional)</label>
          <input id="t-subscriber" type="search" value={subscriber} onChange={(e) => setSubscriber(e.target.value)} placeholder="ada@example.com" />
          <PreviewWidths width={width} onChange={setWidth} />
          {previewError && (
            <div className="error" role="alert">
              <strong>{previewError.title}</strong>
              <p>{previewError.detail}</p>
              {previewError.line !== undefined && <p data-testid="template-error-position">{previewError.field}: line {previewError.line}, column {previewError.column}</p>}
            </div>
          )}
          {preview && (
            <>
              <p><strong>Subject:</strong> <span data-testid="preview-subject">{preview.subject}</span></p>
              <MergeWarnings warnings={preview.warnings} title="Rendered empty or unknown" testId="preview-warnings" />
              {preview.html !== null && <iframe title="HTML preview" sandbox="" srcDoc={preview.html} className={`mail-frame ${width}`} />}
              {preview.text !== null && <pre className="wrap">{preview.text}</pre>}
            </>
          )}
        </section>
      </div>
    </>
  );
}
