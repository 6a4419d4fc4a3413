import { useEffect, useRef, useState } from 'react';

const loadCodeMirror = () => Promise.all([import('codemirror'), import('@codemirror/lang-html'), import('./code-highlight')]);

/**
 * An HTML source editor with highlighting (CodeMirror 6), loaded only when a page shows one so
 * the first load stays small. Until it has loaded, and if it fails to, a plain textarea with the
 * same label edits the same value. The editable area carries the label (`aria-label`), so
 * assistive technology and tests find it by its name like any field.
 */
export function CodeEditor({ label, value, onChange, rows = 12 }: { label: string; value: string; onChange: (v: string) => void; rows?: number }) {
  const host = useRef<HTMLDivElement>(null);
  const [ready, setReady] = useState(false);
  const view = useRef<{ state: { doc: { toString(): string } }; dispatch: (tr: object) => void; destroy(): void } | null>(null);
  const latest = useRef({ value, onChange });
  latest.current = { value, onChange };

  // Load CodeMirror, then drop the textarea (ready), then mount the editor in its place: never
  // two fields with the same label at once.
  const modules = useRef<Awaited<ReturnType<typeof loadCodeMirror>> | null>(null);
  useEffect(() => {
    let cancelled = false;
    void loadCodeMirror().then((m) => {
      if (cancelled) return;
      modules.current = m;
      setReady(true);
    }, () => { /* the textarea stays */ });
    return () => { cancelled = true; };
  }, []);
  useEffect(() => {
    const m = modules.current;
    if (!ready || !m || !host.current) return;
    const [cm, lang, highlight] = m;
    view.current = new cm.EditorView({
      doc: latest.current.value,
      parent: host.current,
      extensions: [
        cm.basicSetup,
        lang.html(),
        highlight.readableHighlighting,
        cm.EditorView.lineWrapping,
        cm.EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true' }),
        cm.EditorView.updateListener.of((u) => { if (u.docChanged) latest.current.onChange(u.state.doc.toString()); }),
      ],
    });
    return () => {
      view.current?.destroy();
      view.current = null;
    };
  }, [ready, label]);

  // A value set from outside (a reset, a loaded template) replaces the document.
  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.toString().length, insert: value } });
  }, [value]);

  return (
    <div className="code-editor" ref={host} data-testid="code-editor" data-ready={ready}>
      {!ready && <textarea aria-label={label} rows={rows} value={value} onChange={(e) => onChange(e.target.value)} spellCheck={false} />}
    </div>
  );
}
