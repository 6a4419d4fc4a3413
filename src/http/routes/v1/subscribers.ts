import { finishPage, ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { confirmByToken } from '../../../domain/audience/double-opt-in.js';
import {
  deleteSubscriber, getSubscriber, listSubscribers, updateSubscriber, upsertSubscriber,
} from '../../../domain/audience/subscribers.js';
import { accountWrite, withSandbox } from '../../account-write.js';
import { invalidResponse, notFoundResponse } from './common-schemas.js';
import { Attributes, subscriberExample, SubscriberSchema, SubscriberStatusSchema } from './subscriber-schemas.js';
import { problemResponse } from '../../problem.js';

const SettableStatus = Type.Union([Type.Literal('active'), Type.Literal('unconfirmed'), Type.Literal('unsubscribed')]);
const ListIds = Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 });

const CreateBody = Type.Object({
  email: Type.String({ maxLength: 320 }),
  name: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 200 })])),
  list: Type.Optional(Type.String({ maxLength: 200, description: 'Id of a list to add the subscriber to' })),
  lists: Type.Optional(ListIds),
  attributes: Type.Optional(Attributes),
  status: Type.Optional(SettableStatus),
}, {
  additionalProperties: false,
  examples: [{ email: 'ada@example.com', name: 'Ada Lovelace', list: 'lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c01', attributes: { plan: 'pro' } }],
});

const PatchBody = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 320 })),
  name: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 200 })])),
  status: Type.Optional(SettableStatus),
  attributes: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Merged into the stored attributes; a null value removes that key' })),
  list: Type.Optional(Type.String({ maxLength: 200, description: 'A list to add' })),
  addLists: Type.Optional(ListIds),
  removeLists: Type.Optional(ListIds),
}, {
  additionalProperties: false,
  examples: [{ name: 'Ada King', attributes: { plan: 'team', trial: null }, addLists: ['lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c02'] }, { status: 'unsubscribed' }],
});

const NotFound = notFoundResponse('subscriber', subscriberExample.id);
const Invalid = invalidResponse('validation_failed: e.g. an invalid address, an unknown list, a status only the system sets', 'list', 'unknown list lst_019a6f0c3b2e7d1a9c4b5e6f7a8b9c99');
const PatchRefused = problemResponse(
  'validation_failed as for create; recipient_suppressed when the status contradicts a suppression of the address',
  'recipient_suppressed',
  'ada@example.com is on the suppression list, so its status stays unsubscribed; remove it with DELETE /api/v1/suppression to re-subscribe',
);
const Conflict = problemResponse('Another subscriber already has the new address', 'conflict', 'another subscriber already has the address ada@example.com');

const SubscriberQuery = Type.Object({
  ...ListQuery.properties,
  list: Type.Optional(Type.String({ maxLength: 200, description: 'Only members of this list' })),
  status: Type.Optional(SubscriberStatusSchema),
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Email or name contains (case-insensitive)' })),
});

const Ref = Type.Object({ idOrEmail: Type.String({ maxLength: 320, description: 'sub_… id or the email address' }) });

const tags = ['subscribers'];

function page(title: string, message: string, status: number): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title}</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}</style></head>
<body><h1>${title}</h1><p>${message}</p><!-- ${status} --></body></html>\n`;
}

export async function subscriberRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock, config } = app.deps;

  app.get('/api/v1/subscribers', {
    schema: {
      operationId: 'listSubscribers',
      summary: 'List subscribers',
      description: 'Filter by list, status and q (email or name contains). Newest first by default; ids are unique, '
        + 'time-ordered and never reused, so polling connectors (`limit=50&order=desc`) dedupe by id. `nextCursor` '
        + 'pages on; pages stay stable while subscribers are added.',
      tags,
      querystring: SubscriberQuery,
      response: { 200: { ...listResponse(SubscriberSchema), examples: [{ data: [subscriberExample], nextCursor: null }] } },
    },
  }, async (request) => {
    const q = request.query;
    const p = pageOf(q);
    const filter = { listId: q.list ?? null, status: q.status ?? null, q: q.q ?? null };
    return finishPage(await listSubscribers(pool, request.auth.accountId, filter, p), p, (s) => s.id);
  });

  app.post('/api/v1/subscribers', {
    schema: {
      operationId: 'upsertSubscriber',
      summary: 'Create or update a subscriber',
      description: 'Creates the subscriber (201), or, when the address exists (compared case-insensitively), updates the '
        + 'given fields, merges attributes and adds the lists (200), so connectors can upsert. New members of a double '
        + 'opt-in list are unconfirmed and get a confirmation mail, unless `status` says otherwise. A suppressed address '
        + '(unsubscribe, complaint, hard bounce) keeps the matching status.',
      tags,
      body: CreateBody,
      response: {
        201: { ...SubscriberSchema, examples: [subscriberExample] },
        200: { ...SubscriberSchema, examples: [{ ...subscriberExample, name: 'Ada King' }] },
        422: Invalid,
      },
    },
  }, async (request, reply) => {
    const r = await accountWrite(app, request, (db) => upsertSubscriber(db, request.auth.accountId, request.body, clock.now()));
    return reply.code(r.value.created ? 201 : 200).send(withSandbox({ value: r.value.subscriber, sandbox: r.sandbox }));
  });

  app.get('/api/v1/subscribers/:idOrEmail', {
    schema: {
      operationId: 'getSubscriber',
      summary: 'Get a subscriber by id or email',
      description: 'By `sub_…` id, or by address (matched case-insensitively; URL-encode it).',
      tags,
      params: Ref,
      response: { 200: { ...SubscriberSchema, examples: [subscriberExample] }, 404: NotFound },
    },
  }, async (request) => getSubscriber(pool, request.auth.accountId, request.params.idOrEmail));

  app.patch('/api/v1/subscribers/:idOrEmail', {
    schema: {
      operationId: 'updateSubscriber',
      summary: 'Update a subscriber',
      description: 'Only the fields given change. `list`/`addLists` add memberships, `removeLists` removes them. Setting a '
        + 'status that contradicts a suppression of the address is refused (recipient_suppressed).',
      tags,
      params: Ref,
      body: PatchBody,
      response: { 200: { ...SubscriberSchema, examples: [subscriberExample] }, 404: NotFound, 409: Conflict, 422: PatchRefused },
    },
  }, async (request) => {
    const r = await accountWrite(app, request, (db) => updateSubscriber(db, request.auth.accountId, request.params.idOrEmail, request.body, clock.now()));
    return withSandbox(r);
  });

  app.delete('/api/v1/subscribers/:idOrEmail', {
    schema: {
      operationId: 'deleteSubscriber',
      summary: 'Delete a subscriber',
      description: 'Removes the subscriber and its memberships. A suppression of the address is not touched.',
      tags,
      params: Ref,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound },
    },
  }, async (request, reply) => {
    await accountWrite(app, request, (db) => deleteSubscriber(db, request.auth.accountId, request.params.idOrEmail));
    return reply.code(204).send(null);
  });

  // The link in double opt-in mails. Public: the token is the credential (about 150
  // characters, within the router's parameter limit set in app.ts).
  app.get('/confirm/:token', {
    config: { public: true },
    schema: {
      operationId: 'confirmSubscription',
      summary: 'Confirm a double opt-in subscription',
      description: 'Target of the link in confirmation mails. A valid token makes the unconfirmed subscriber active; a '
        + 'forged, altered or expired one answers 404. Answers a small HTML page.',
      tags,
      params: Type.Object({ token: Type.String({ maxLength: 800, description: 'The signed token' }) }),
      response: {
        200: { description: 'Confirmed (or already confirmed)', content: { 'text/html': { schema: Type.String(), examples: { confirmed: { value: '<!doctype html>…Subscription confirmed…' } } } } },
        404: { description: 'Invalid or expired link', content: { 'text/html': { schema: Type.String(), examples: { invalid: { value: '<!doctype html>…Link not valid…' } } } } },
      },
    },
  }, async (request, reply) => {
    const outcome = await confirmByToken(pool, config.secret, request.params.token, clock.now());
    reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer');
    if (outcome.result === 'invalid') {
      return reply.code(404).send(page('Link not valid', 'This confirmation link is not valid or has expired.', 404));
    }
    if (outcome.result === 'confirmed' || outcome.status === 'active') {
      return reply.send(page('Subscription confirmed', 'Thank you — your subscription is confirmed.', 200));
    }
    return reply.send(page('Subscription not active', 'This address is not receiving mail from this list (it unsubscribed or mail to it bounced).', 200));
  });
}
