/** Merge-field warnings as the API answers them (`warnings: [{field, message}]`), beside an editor or a preview. */

export interface MergeWarning { field: string; message: string }

export function MergeWarnings({ warnings, title, testId }: { warnings: MergeWarning[] | undefined; title: string; testId?: string }) {
  if (!warnings || warnings.length === 0) return null;
  return (
    <div className="warnings" role="status" data-testid={testId}>
      <strong>{title}</strong>
      <ul>{warnings.map((w) => <li key={w.field + w.message}><code>{`{{ ${w.field} }}`}</code> {w.message}</li>)}</ul>
    </div>
  );
}

/** Desktop or phone width for a mail preview frame. */
export function PreviewWidths({ width, onChange }: { width: 'desktop' | 'mobile'; onChange: (w: 'desktop' | 'mobile') => void }) {
  return (
    <fieldset className="widths">
      <legend>Preview width</legend>
      <label className="check"><input type="radio" name="preview-width" checked={width === 'desktop'} onChange={() => onChange('desktop')} /> Desktop</label>
      <label className="check"><input type="radio" name="preview-width" checked={width === 'mobile'} onChange={() => onChange('mobile')} /> Mobile (375 px)</label>
    </fieldset>
  );
}
