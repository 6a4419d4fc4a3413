import { ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  createTemplate, deleteTemplate, getTemplate, listTemplates, previewTemplate, templateFolders, templateWarnings, TEMPLATE_LIMITS, updateTemplate,
} from '../../../domain/stored-templates.js';
import { MergeWarnings } from './merge-warnings.js';
import { previewSubscriber } from '../../../domain/audience/subscribers.js';
import { problemResponse } from '../../problem.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
/**
 * A request field that takes a string or null. Written as `type: ["string", "null"]` rather
 * than anyOf: with the app's coerceTypes, ajv would turn a null into "" in an anyOf's string
 * branch, and "clear this field" would silently become "set it to empty".
 */
const NullableInput = (opts: { maxLength: number; description: string }) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], ...opts } as never);
const Timestamp = (description: string) => Type.String({ format: 'date-time', description });

const summaryFields = {
  id: Type.String({ description: 'tpl_… identifier' }),
  name: Type.String(),
  folder: Nullable(Type.String({ description: 'Folder name; null when the template is in no folder' })),
  subject: Nullable(Type.String({ description: 'Subject line, template-language source' })),
  createdAt: Timestamp('ISO 8601 UTC with milliseconds'),
  updatedAt: Timestamp('Last change, ISO 8601 UTC with milliseconds'),
};
const TemplateSummary = Type.Object(summaryFields);
const TemplateRecord = Type.Object({
  ...summaryFields,
  html: Nullable(Type.String({ description: 'HTML body, template-language source' })),
  text: Nullable(Type.String({ description: 'Plain-text body, template-language source' })),
});

const ID = 'tpl_019a6f0c3b2e7d1a9c4b5e6f7a8b9c10';
const SUMMARY_EXAMPLE = {
  id: ID,
  name: 'Order confirmation',
  folder: 'Transactional',
  subject: 'Your order {{ order.number }} is confirmed',
  createdAt: '2026-11-20T10:15:30.123Z',
  updatedAt: '2026-11-21T08:02:11.456Z',
};
const HTML_EXAMPLE = '<p>Hi {{ first_name | there }},</p>\n<ul>[for item in order.items]<li>{{ item.name }} × {{ item.qty | 1 }}</li>[/for]</ul>';
const TEXT_EXAMPLE = 'Hi {{ first_name | there }},\n[for item in order.items]- {{ item.name }} x {{ item.qty | 1 }}\n[/for]';
const RECORD_EXAMPLE = { ...SUMMARY_EXAMPLE, html: HTML_EXAMPLE, text: TEXT_EXAMPLE };
/** A template as a save or a read answers it: with the merge-field warnings of its parts. */
const SavedTemplate = Type.Object({ ...TemplateRecord.properties, warnings: MergeWarnings });
const SAVED_EXAMPLE = { ...RECORD_EXAMPLE, warnings: [] };

const parts = {
  folder: NullableInput({ maxLength: TEMPLATE_LIMITS.folder, description: `At most ${TEMPLATE_LIMITS.folder} characters, trimmed; "" or null = no folder` }),
  subject: NullableInput({ maxLength: TEMPLATE_LIMITS.subjectBytes, description: `Template-language source; at most ${TEMPLATE_LIMITS.subjectBytes} bytes (UTF-8); null = none` }),
  html: NullableInput({ maxLength: TEMPLATE_LIMITS.bodyBytes, description: `Template-language source; at most ${TEMPLATE_LIMITS.bodyBytes} bytes (UTF-8, 2 MiB); null = none` }),
  text: NullableInput({ maxLength: TEMPLATE_LIMITS.bodyBytes, description: `Template-language source; at most ${TEMPLATE_LIMITS.bodyBytes} bytes (UTF-8, 2 MiB); null = none` }),
};
const NAME = Type.String({ minLength: 1, maxLength: TEMPLATE_LIMITS.name, description: `1 to ${TEMPLATE_LIMITS.name} characters, trimmed` });

const CreateBody = Type.Object(
  { name: NAME, folder: Type.Optional(parts.folder), subject: Type.Optional(parts.subject), html: Type.Optional(parts.html), text: Type.Optional(parts.text) },
  { additionalProperties: false, examples: [{ name: 'Order confirmation', folder: 'Transactional', subject: 'Your order {{ order.number }} is confirmed', html: HTML_EXAMPLE, text: TEXT_EXAMPLE }] },
);
const PatchBody = Type.Object(
  { name: Type.Optional(NAME), folder: Type.Optional(parts.folder), subject: Type.Optional(parts.subject), html: Type.Optional(parts.html), text: Type.Optional(parts.text) },
  { additionalProperties: false, minProperties: 1, examples: [{ folder: 'Archive' }, { subject: 'Order {{ order.number }}: confirmed', text: null }] },
);
const IdParams = Type.Object({ id: Type.String({ description: 'Template id (tpl_…)' }) });
const ListTemplatesQuery = Type.Object({
  ...ListQuery.properties,
  folder: Type.Optional(Type.String({ maxLength: TEMPLATE_LIMITS.folder, description: 'Only templates in this folder; empty (`folder=`) = templates in no folder' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Case-insensitive substring of the name' })),
});
const RenderBody = Type.Object(
  {
    variables: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Merge data, as in POST /api/v1/emails' })),
    subscriberId: Type.Optional(Type.String({ maxLength: 320, description: 'Render as this subscriber (id or address) would get it: `subscriber.*` and `email` filled in (docs/templates.md, "Merge fields")' })),
    draft: Type.Optional(Type.Object(
      { subject: Type.Optional(parts.subject), html: Type.Optional(parts.html), text: Type.Optional(parts.text) },
      { additionalProperties: false, description: 'Unsaved parts to render in place of the saved ones (an editor\'s live preview): same limits and syntax checks as a save; nothing is stored' },
    )),
  },
  { additionalProperties: false, examples: [{ variables: { first_name: 'Ada', order: { number: 'A-1001', items: [{ name: 'Lamp', qty: 2 }, { name: 'Bulb' }] } } }, { variables: { first_name: 'Ada' }, draft: { html: '<p>Hi {{ first_name }}, a new draft</p>' } }] },
);
const Rendered = Type.Object({
  subject: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  warnings: MergeWarnings,
});

const NotFound = problemResponse('No template with this id in this account (ids of other accounts are not found either)', 'not_found', `template ${ID} not found`);
const Unprocessable = problemResponse(
  'validation_failed (schema or size limits), or template_error: a syntax error in subject, html or text, with field, line and column',
  'template_error',
  'html: unclosed loop: "[for item in order.items]" has no matching "[/for]" (line 3, column 1)',
  undefined,
  { field: 'html', line: 3, column: 1 },
);

/** Templates: CRUD, folders and the render preview (docs/templates-api.md). */
export async function templateRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/templates', {
    schema: {
      operationId: 'listTemplates',
      summary: 'List templates',
      description: 'Templates of the account without their bodies, newest first by default. Filter by `folder` and by `q` (name contains, case-insensitive); paginate with `limit`, `order` and `cursor` (the previous page\'s `nextCursor`).',
      tags: ['templates'],
      querystring: ListTemplatesQuery,
      response: { 200: { ...listResponse(TemplateSummary), description: 'One page of templates', examples: [{ data: [SUMMARY_EXAMPLE], nextCursor: null }] } },
    },
  }, async (request) => {
    const { folder, q, ...list } = request.query;
    return listTemplates(pool, request.auth.accountId, { folder, q }, pageOf(list));
  });

  app.post('/api/v1/templates', {
    schema: {
      operationId: 'createTemplate',
      summary: 'Create a template',
      description: 'Stores a template. Subject, html and text are template-language source (docs/templates.md) and are parsed on save: a syntax error is 422 `template_error` with the field, line and column.',
      tags: ['templates'],
      body: CreateBody,
      response: { 201: { ...SavedTemplate, description: 'The created template, with warnings for unknown subscriber fields', examples: [SAVED_EXAMPLE] }, 422: Unprocessable },
    },
  }, async (request, reply) => {
    const template = await createTemplate(pool, request.auth.accountId, request.body, clock.now());
    return reply.code(201).send({ ...template, warnings: templateWarnings(template) });
  });

  app.get('/api/v1/templates/folders', {
    schema: {
      operationId: 'listTemplateFolders',
      summary: 'List template folders',
      description: 'Every folder name in use with the number of templates in it, by name; `folder: null` counts the templates in no folder and comes last. A folder exists while a template is in it.',
      tags: ['templates'],
      response: {
        200: {
          ...Type.Object({ data: Type.Array(Type.Object({ folder: Nullable(Type.String()), count: Type.Integer({ minimum: 1 }) })) }),
          description: 'Folders with their template counts',
          examples: [{ data: [{ folder: 'Newsletters', count: 4 }, { folder: 'Transactional', count: 12 }, { folder: null, count: 2 }] }],
        },
      },
    },
  }, async (request) => ({ data: await templateFolders(pool, request.auth.accountId) }));

  app.get('/api/v1/templates/:id', {
    schema: {
      operationId: 'getTemplate',
      summary: 'Get a template',
      description: 'The full template, bodies included.',
      tags: ['templates'],
      params: IdParams,
      response: { 200: { ...SavedTemplate, description: 'The template, with warnings for unknown subscriber fields', examples: [SAVED_EXAMPLE] }, 404: NotFound },
    },
  }, async (request) => {
    const template = await getTemplate(pool, request.auth.accountId, request.params.id);
    return { ...template, warnings: templateWarnings(template) };
  });

  app.patch('/api/v1/templates/:id', {
    schema: {
      operationId: 'updateTemplate',
      summary: 'Update a template',
      description: 'Changes the fields given; `null` clears folder, subject, html or text. Same limits and syntax check as on create.',
      tags: ['templates'],
      params: IdParams,
      body: PatchBody,
      response: { 200: { ...SavedTemplate, description: 'The updated template, with warnings for unknown subscriber fields', examples: [{ ...SAVED_EXAMPLE, folder: 'Archive' }] }, 404: NotFound, 422: Unprocessable },
    },
  }, async (request) => {
    const template = await updateTemplate(pool, request.auth.accountId, request.params.id, request.body, clock.now());
    return { ...template, warnings: templateWarnings(template) };
  });

  app.delete('/api/v1/templates/:id', {
    schema: {
      operationId: 'deleteTemplate',
      summary: 'Delete a template',
      description: 'Removes the template. Messages already sent from it are not affected.',
      tags: ['templates'],
      params: IdParams,
      response: {
        200: { ...Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), description: 'The template was deleted', examples: [{ id: ID, deleted: true }] },
        404: NotFound,
      },
    },
  }, async (request) => {
    await deleteTemplate(pool, request.auth.accountId, request.params.id);
    return { id: request.params.id, deleted: true as const };
  });

  app.post('/api/v1/templates/:id/render', {
    schema: {
      operationId: 'renderTemplate',
      summary: 'Preview a template',
      description: 'Renders subject, html and text with the given variables, exactly as a send would (values HTML-escaped in html; no line breaks in the subject); with `subscriberId`, as that subscriber would get it. `warnings` names unknown subscriber fields and placeholders that rendered empty without a fallback. `draft` renders unsaved parts instead of the saved ones (the dashboard editor\'s live preview). Nothing is sent or stored; a part the template lacks is null.',
      tags: ['templates'],
      params: IdParams,
      body: RenderBody,
      response: {
        200: {
          ...Rendered,
          description: 'The rendered parts; null for a part the template lacks',
          examples: [{
            subject: 'Your order A-1001 is confirmed',
            html: '<p>Hi Ada,</p>\n<ul><li>Lamp × 2</li><li>Bulb × 1</li></ul>',
            text: 'Hi Ada,\n- Lamp x 2\n- Bulb x 1\n',
            warnings: [],
          }],
        },
        404: NotFound,
        422: Unprocessable,
      },
    },
  }, async (request) => {
    const { variables, draft, subscriberId } = request.body;
    const subscriber = subscriberId === undefined ? null : await previewSubscriber(pool, request.auth.accountId, subscriberId);
    return previewTemplate(pool, request.auth.accountId, request.params.id, variables ?? {}, draft ?? {}, { subscriber });
  });
}
