import { finishPage, ListQuery, listResponse, pageOf } from '../../pagination.js';
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createImport, getImport, IMPORT_MAX_ROWS, listImports, simulateImport, type ImportSource } from '../../../domain/audience/imports.js';
import { AppError, invalid } from '../../../errors.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { IdParam, invalidResponse, notFoundResponse, SandboxFlag } from './common-schemas.js';

/** 100,000 rows with a few attributes each fit well within this. */
const IMPORT_BODY_LIMIT = 64 * 1024 * 1024;

const ImportSchema = Type.Object({
  id: Type.String({ description: 'imp_…' }),
  listId: Type.Union([Type.String(), Type.Null()]),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('completed'), Type.Literal('failed')]),
  total: Type.Integer({ description: 'Rows in the import' }),
  processed: Type.Integer({ description: 'Rows done so far' }),
  created: Type.Integer(),
  updated: Type.Integer({ description: 'Rows whose address already existed' }),
  skipped: Type.Integer({ description: 'Rows refused; see errors' }),
  errorCount: Type.Integer(),
  errors: Type.Array(Type.Object({
    row: Type.Integer({ description: '1-based data row (a CSV header is not a row)' }),
    email: Type.Optional(Type.String()),
    message: Type.String(),
  }), { description: 'Row errors, the first 1,000' }),
  failure: Type.Union([Type.String(), Type.Null()], { description: 'Why the job failed or was retried' }),
  createdAt: Type.String({ format: 'date-time' }),
  startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  sandbox: SandboxFlag,
});

const example = {
  id: 'imp_019a6f0c3b2e7d1a9c4b5e6f7a8b9c30',
  listId: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01',
  status: 'running',
  total: 25000,
  processed: 12000,
  created: 11800,
  updated: 190,
  skipped: 10,
  errorCount: 10,
  errors: [{ row: 17, email: 'bob@@example.com', message: 'email: is not an email address' }],
  failure: null,
  createdAt: '2026-11-20T10:15:30.123Z',
  startedAt: '2026-11-20T10:15:31.002Z',
  finishedAt: null,
};

const JsonBody = Type.Object({
  list: Type.String({ maxLength: 200, description: 'Id of the list to import into' }),
  subscribers: Type.Optional(Type.Array(Type.Unknown(), { description: `Rows {email, name?, status?, attributes?, …}; at most ${IMPORT_MAX_ROWS}` })),
  csv: Type.Optional(Type.String({ description: 'CSV text with a header row (email required; name, status; other columns become attributes)' })),
}, {
  additionalProperties: false,
  examples: [
    { list: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01', subscribers: [{ email: 'ada@example.com', name: 'Ada', attributes: { plan: 'pro' } }, { email: 'bob@example.com', plan: 'free' }] },
    { list: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01', csv: 'email,name,plan\nada@example.com,Ada,pro\n' },
  ],
});

const NotFound = notFoundResponse('import', example.id);
const Invalid = invalidResponse('validation_failed: more than 100,000 rows, no email column, not CSV / not an array, an unknown list', 'rows', 'must be at most 100000 rows, got 100001');

const tags = ['subscribers'];

export async function importRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;
  // Raw CSV bodies, for this plugin's routes only.
  app.addContentTypeParser('text/csv', { parseAs: 'buffer', bodyLimit: IMPORT_BODY_LIMIT }, (_request, body, done) =>
    typeof body !== 'string' && isUtf8(body) ? done(null, body.toString('utf8')) : done(new AppError('invalid_json', 'Body is not valid UTF-8 CSV'), undefined));

  app.post('/api/v1/subscribers/import', {
    bodyLimit: IMPORT_BODY_LIMIT,
    // A row with NUL is reported as that row's error (domain/audience/imports.ts), not the file's.
    config: { bodyTextCheckedByHandler: ['subscribers', 'csv', ''] },
    schema: {
      operationId: 'importSubscribers',
      summary: 'Import subscribers',
      description: `Up to ${IMPORT_MAX_ROWS} rows into one list, as a background job: answers 202 with the import, whose `
        + 'progress GET /api/v1/imports/{id} shows. Send JSON `{list, subscribers: [...]}` or `{list, csv}`, or a raw '
        + '`text/csv` body with `?list=`. Existing addresses are updated; invalid rows are skipped and listed by row number.',
      tags,
      querystring: Type.Object({ list: Type.Optional(Type.String({ maxLength: 200, description: 'List id, for text/csv bodies' })) }),
      body: {
        content: {
          'application/json': { schema: JsonBody },
          'text/csv': { schema: Type.String({ description: 'CSV with a header row', examples: ['email,name,plan\nada@example.com,Ada,pro\n'] }) },
        },
      },
      response: { 202: { ...ImportSchema, examples: [{ ...example, status: 'queued', processed: 0, created: 0, updated: 0, skipped: 0, errorCount: 0, errors: [], startedAt: null }] }, 422: Invalid },
    },
  }, async (request, reply) => {
    const body: unknown = request.body;
    if (body === undefined || body === null) throw invalid('body', 'is required: JSON {list, subscribers} or {list, csv}, or a text/csv body with ?list=');
    let listId: string | undefined;
    let source: ImportSource;
    if (typeof body === 'string') {
      listId = request.query.list;
      source = { format: 'csv', text: body };
    } else {
      const b = body as { list: string; subscribers?: unknown[]; csv?: string };
      listId = b.list;
      if ((b.subscribers === undefined) === (b.csv === undefined)) throw invalid('subscribers', 'give exactly one of subscribers (JSON rows) or csv');
      source = b.csv !== undefined ? { format: 'csv', text: b.csv } : { format: 'json', rows: b.subscribers };
    }
    if (!listId) throw invalid('list', 'is required');
    const accountId = request.auth.accountId;
    const input = { listId, source };
    const r = await accountWrite(app, request, (db) => (request.auth.mode === 'live' ? createImport(db, accountId, input, clock.now()) : simulateImport(db, accountId, input, clock.now())));
    return reply.code(202).header('Location', `/api/v1/imports/${r.value.id}`).send(withSandbox(r));
  });

  app.get('/api/v1/imports', {
    schema: {
      operationId: 'listImports',
      summary: 'List imports',
      description: 'Newest first by default, with their progress.',
      tags,
      querystring: ListQuery,
      response: { 200: { ...listResponse(ImportSchema), examples: [{ data: [example], nextCursor: null }] } },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await listImports(pool, request.auth.accountId, page), page, (i) => i.id);
  });

  app.get('/api/v1/imports/:id', {
    schema: {
      operationId: 'getImport',
      summary: 'Get an import and its progress',
      description: 'processed / total, created, updated, skipped, and the errors by row; status queued → running → completed (or failed).',
      tags,
      params: IdParam,
      response: { 200: { ...ImportSchema, examples: [example] }, 404: NotFound },
    },
  }, async (request) => getImport(pool, request.auth.accountId, request.params.id));
}
