import type { CampaignAudience, CampaignDefinitionRow, CampaignRow, CampaignStatus } from '../../db/queries/campaigns/campaigns.js';
import type { Queryable } from '../../db/pool.js';
import { selectSegment } from '../../db/queries/segments.js';
import { AppError, type FieldError } from '../../errors.js';
import { hasPrefix } from '../../ids.js';
import { validateComposeInput } from '../../mail/compose.js';
import { compileTemplate, renderTemplate, type Template } from '../../templates/index.js';
import { findSendingDomain, type SendingDomain } from '../domains/domains.js';
import { parseEmailAddress } from '../email-address.js';
import { requireLists } from '../audience/lists.js';
import { SEND_LIMITS } from '../sending/send-input.js';
import { getTemplate, requireTemplateForSend, type CompiledTemplate } from '../stored-templates.js';
import { mergeContext } from '../merge/context.js';

/**
 * A campaign's definition: what a create or a PATCH may set, its validation (the same rules
 * as POST /api/v1/emails, plus the audience), and the API shape.
 */

export const CAMPAIGN_LIMITS = {
  name: 200,
  lists: 50,
  tags: 20,
  headers: 50,
  throttleMax: 100_000,
  scheduleDays: 365,
} as const;

export interface CampaignInput {
  name: string;
  subject?: string;
  from: { email: string; name?: string };
  replyTo?: string | null;
  html?: string | null;
  text?: string | null;
  templateId?: string | null;
  variables?: Record<string, unknown>;
  /** As the API takes it: a null segment is no segment. */
  audience: Omit<CampaignAudience, 'segment'> & { segment?: string | null };
  tags?: string[];
  headers?: Record<string, string>;
  scheduledAt?: string | null;
  throttle?: number | null;
  strict?: boolean;
}

export interface CampaignDefinition {
  id: string;
  name: string;
  status: CampaignStatus;
  subject: string | null;
  from: { email: string; name: string | null };
  replyTo: string | null;
  html: string | null;
  text: string | null;
  templateId: string | null;
  variables: Record<string, unknown>;
  audience: { lists: string[]; segment: string | null; excludeLists: string[] };
  tags: string[];
  headers: Record<string, string>;
  scheduledAt: string | null;
  throttle: number | null;
  strict: boolean;
  pauseReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export function toDefinition(r: CampaignRow): CampaignDefinition {
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    subject: r.subject,
    from: { email: r.from_email, name: r.from_name },
    replyTo: r.reply_to,
    html: r.html,
    text: r.text,
    templateId: r.template_id,
    variables: r.variables,
    audience: { lists: r.audience.lists, segment: r.audience.segment ?? null, excludeLists: r.audience.excludeLists ?? [] },
    tags: r.tags,
    headers: r.headers,
    scheduledAt: r.scheduled_at?.toISOString() ?? null,
    throttle: r.throttle,
    strict: r.strict,
    pauseReason: r.pause_reason,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

/** The row fields of a create; a PATCH merges its changes onto the stored row first. */
export function definitionRow(input: CampaignInput): CampaignDefinitionRow {
  return {
    name: input.name,
    subject: input.subject ?? null,
    from_email: input.from.email,
    from_name: input.from.name ?? null,
    reply_to: input.replyTo ?? null,
    html: input.html ?? null,
    text: input.text ?? null,
    template_id: input.templateId ?? null,
    variables: input.variables ?? {},
    audience: {
      lists: [...new Set(input.audience.lists)],
      ...(input.audience.segment ? { segment: input.audience.segment } : {}),
      excludeLists: [...new Set(input.audience.excludeLists ?? [])],
    },
    tags: input.tags ?? [],
    headers: input.headers ?? {},
    scheduled_at: input.scheduledAt ? new Date(input.scheduledAt) : null,
    throttle: input.throttle ?? null,
    strict: input.strict ?? false,
  };
}

/** The compiled content a campaign sends: its own parts over its template's. */
export interface CampaignContent {
  subject: Template;
  html: Template | null;
  text: Template | null;
  /** Raw sources, frozen into the campaign when it is sent. */
  sources: { subject: string; html: string | null; text: string | null };
}

/** A stand-in recipient for validation renders and test sends without subscribers. */
export const SAMPLE_SUBSCRIBER = { id: 'sub_sample', email: 'subscriber@example.com', name: 'Sample Subscriber', attributes: {} };

/**
 * Every check of a definition, in the order of POST /api/v1/emails: fields and addresses (all
 * reported together), template syntax, then the account's template, verified sender domain,
 * lists and segment. Returns the sending domain and the compiled content.
 */
export async function checkDefinition(db: Queryable, accountId: string, d: CampaignDefinitionRow, now: Date): Promise<{ domain: SendingDomain; content: CampaignContent }> {
  const errors: FieldError[] = [];
  const bad = (field: string, message: string) => errors.push({ field, message });
  if (d.name.trim() === '') bad('name', 'must not be empty');
  const from = parseEmailAddress(d.from_email);
  if (!from.ok) bad('from.email', from.message);
  if (d.reply_to !== null) {
    const r = parseEmailAddress(d.reply_to);
    if (!r.ok) bad('replyTo', r.message);
  }
  if (d.subject !== null && /[\r\n]/.test(d.subject)) bad('subject', 'must not contain CR or LF');
  if (d.html === null && d.text === null && d.template_id === null) bad('html', 'one of html, text or templateId is required');
  for (const part of ['html', 'text'] as const) {
    const v = d[part];
    if (v !== null && Buffer.byteLength(v) > SEND_LIMITS.bodyBytes) bad(part, `must be at most ${SEND_LIMITS.bodyBytes} bytes`);
  }
  if (d.audience.lists.length === 0) bad('audience.lists', 'must name at least one list');
  if (d.audience.lists.length > CAMPAIGN_LIMITS.lists) bad('audience.lists', `must name at most ${CAMPAIGN_LIMITS.lists} lists`);
  if (d.scheduled_at !== null) {
    if (Number.isNaN(d.scheduled_at.getTime())) bad('scheduledAt', 'must be an ISO 8601 date-time');
    else if (d.scheduled_at.getTime() > now.getTime() + CAMPAIGN_LIMITS.scheduleDays * 86_400_000) {
      bad('scheduledAt', `must be at most ${CAMPAIGN_LIMITS.scheduleDays} days ahead`);
    }
  }
  if (errors.length > 0) throw new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });

  const own = {
    subject: d.subject === null ? null : compileTemplate(d.subject),
    html: d.html === null ? null : compileTemplate(d.html),
    text: d.text === null ? null : compileTemplate(d.text),
  };
  const template: CompiledTemplate | null = d.template_id === null ? null : await requireTemplateForSend(db, accountId, d.template_id);
  const content = mergeContent(own, template, d, template ? await getTemplate(db, accountId, template.id) : null);
  checkRenderedSample(d, content);

  const domain = await findSendingDomain(db, accountId, d.from_email);
  if (!domain) {
    throw new AppError('sender_domain_unverified', `${d.from_email.split('@').pop()} is not a verified sending domain of this account`, {
      errors: [{ field: 'from.email', message: 'must be on a verified domain of the account' }],
    });
  }
  await requireLists(db, accountId, d.audience.lists, 'audience.lists');
  if (d.audience.excludeLists && d.audience.excludeLists.length > 0) await requireLists(db, accountId, d.audience.excludeLists, 'audience.excludeLists');
  const segment = d.audience.segment;
  if (segment !== undefined && !(hasPrefix(segment, 'seg') && (await selectSegment(db, accountId, segment)))) {
    throw new AppError('validation_failed', `audience.segment: unknown segment ${segment}`, { errors: [{ field: 'audience.segment', message: `unknown segment ${segment}` }] });
  }
  return { domain, content };
}

function mergeContent(
  own: { subject: Template | null; html: Template | null; text: Template | null },
  template: CompiledTemplate | null,
  d: CampaignDefinitionRow,
  tplSources: { subject: string | null; html: string | null; text: string | null } | null,
): CampaignContent {
  const subject = own.subject ?? template?.subject ?? null;
  const subjectSource = d.subject ?? tplSources?.subject ?? null;
  if (subject === null || subjectSource === null || subjectSource.trim() === '') {
    throw new AppError('validation_failed', 'subject: is required (in the campaign or its template)', { errors: [{ field: 'subject', message: 'is required (in the campaign or its template)' }] });
  }
  const html = own.html ?? template?.html ?? null;
  const text = own.text ?? template?.text ?? null;
  if (html === null && text === null) {
    throw new AppError('validation_failed', 'html: one of html, text or templateId is required', { errors: [{ field: 'html', message: 'one of html, text or templateId is required' }] });
  }
  return {
    subject,
    html,
    text,
    sources: { subject: subjectSource, html: d.html ?? tplSources?.html ?? null, text: d.text ?? tplSources?.text ?? null },
  };
}

/**
 * The variables a campaign message renders with: the shared merge context (docs/templates.md,
 * "Merge fields"). Campaign messages go only to active subscribers, so the status is known.
 */
export function mergeVariables(
  campaignVariables: Record<string, unknown>,
  subscriber: { id: string; email: string; name: string | null; attributes: Record<string, unknown>; status?: string },
  unsubscribeUrl: string,
): Record<string, unknown> {
  return mergeContext({ values: campaignVariables, email: subscriber.email, subscriber: { status: 'active', ...subscriber }, unsubscribeUrl });
}

/** Renders the sample subscriber once: headers, subject length and CR/LF are checked as for a send. */
function checkRenderedSample(d: CampaignDefinitionRow, content: CampaignContent): void {
  const vars = mergeVariables(d.variables, SAMPLE_SUBSCRIBER, 'https://example.com/u/sample');
  const subject = renderTemplate(content.subject, vars, 'subject');
  if (Buffer.byteLength(subject) > SEND_LIMITS.subjectBytes) {
    throw new AppError('validation_failed', `subject: must be at most ${SEND_LIMITS.subjectBytes} bytes`, { errors: [{ field: 'subject', message: `must be at most ${SEND_LIMITS.subjectBytes} bytes` }] });
  }
  validateComposeInput({
    from: { email: d.from_email, ...(d.from_name !== null ? { name: d.from_name } : {}) },
    to: SAMPLE_SUBSCRIBER.email,
    ...(d.reply_to !== null ? { replyTo: d.reply_to } : {}),
    subject,
    html: content.html ? renderTemplate(content.html, vars, 'html') : undefined,
    text: content.text ? renderTemplate(content.text, vars, 'text') : undefined,
    headers: d.headers,
  });
}
