import type { Queryable } from '../../db/pool.js';
import { compileTemplate, type Template } from '../../templates/index.js';
import { fieldUses, unknownSubscriberFields, type MergeWarning } from '../merge/checks.js';
import { getTemplate } from '../stored-templates.js';
import { describePosition, sendPositions, stepAt, type SendStep, type Step } from './definition.js';

/**
 * Merge-field warnings of an automation's send steps, answered with a save: unknown
 * `subscriber.` fields, named by step (`steps[2].then[0]`). The trigger's data is the caller's,
 * so its fields cannot be checked before a run; a missing one is named when the step sends.
 */
export async function automationMergeWarnings(db: Queryable, accountId: string, steps: Step[]): Promise<MergeWarning[]> {
  const out: MergeWarning[] = [];
  for (const at of sendPositions(steps)) {
    const step = stepAt(steps, at) as SendStep;
    const parts = await sendStepParts(db, accountId, step);
    for (const w of unknownSubscriberFields(fieldUses(parts))) out.push({ field: w.field, message: `${describePosition(at)} ${w.message}` });
  }
  return out;
}

/** The step's own parts over its template's, as a send renders them. */
async function sendStepParts(db: Queryable, accountId: string, step: SendStep): Promise<Record<string, Template | null>> {
  const tpl = step.templateId ? await getTemplate(db, accountId, step.templateId).catch(() => null) : null;
  const part = (own: string | undefined, stored: string | null | undefined) => {
    const source = own ?? stored ?? null;
    return source === null ? null : compileTemplate(source);
  };
  return { subject: part(step.subject, tpl?.subject), html: part(step.html, tpl?.html), text: part(step.text, tpl?.text) };
}
