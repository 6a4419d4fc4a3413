import { ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { inTransaction } from '../../account-write.js';
import { resubscribeAddress, suppressAddress, suppressManyAddresses } from '../../../domain/audience/address-status.js';
import {
  checkSuppression, listSuppressions, MAX_BULK_SUPPRESSIONS, SUPPRESSION_REASONS,
} from '../../../domain/suppression.js';
import { invalid, notFound } from '../../../errors.js';
import { problemResponse } from '../../problem.js';

const Reason = Type.Enum(SUPPRESSION_REASONS, {
  description: 'manual (default; added through the API or dashboard), unsubscribe, hard_bounce, complaint, import',
});
const Email = Type.String({ minLength: 1, maxLength: 254, description: 'A bare address (name@example.com); matched case-insensitively' });
const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds' });

const Entry = Type.Object({
  id: Type.String({ description: 'sup_… identifier' }),
  email: Type.String({ description: 'The address as it was first added' }),
  reason: Reason,
  detail: Type.Union([Type.String(), Type.Null()], { description: 'Why, when known: e.g. the SMTP response of a hard bounce' }),
  bounceReason: Type.Union([Type.String(), Type.Null()], {
    description: 'For hard_bounce: the bounce reason that showed the address dead (user_unknown, host_unknown, has_moved, not_accept; see docs/bounces.md), else null',
  }),
  createdAt: Timestamp,
});
const ENTRY_EXAMPLE = { id: 'sup_019a6f0c3b2e7d1a9c4b5e6f7a8b9c11', email: 'Jane.Doe@example.com', reason: 'manual', detail: null, bounceReason: null, createdAt: '2026-11-20T10:15:30.123Z' };
const BOUNCE_EXAMPLE = {
  id: 'sup_019a6f0c3b2e7d1a9c4b5e6f7a8b9c12', email: 'old@example.org', reason: 'hard_bounce',
  detail: '550 5.1.1 <old@example.org>: Recipient address rejected: User unknown', bounceReason: 'user_unknown', createdAt: '2026-11-19T22:01:05.004Z',
};
const Check = Type.Object({
  email: Type.String({ description: 'The address asked about, as given' }),
  suppressed: Type.Boolean(),
  reason: Type.Union([Reason, Type.Null()]),
  createdAt: Type.Union([Timestamp, Type.Null()]),
});
const BulkResult = Type.Object({
  created: Type.Integer({ description: 'Addresses added' }),
  existing: Type.Integer({ description: 'Entries whose address was already on the list (repeats within the batch included)' }),
});

const ListSuppressionQuery = Type.Object({
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Check this one address instead of listing' })),
  reason: Type.Optional(Reason),
  q: Type.Optional(Type.String({ maxLength: 254, description: 'Case-insensitive substring of the address' })),
  ...ListQuery.properties,
});
const AddBody = Type.Object(
  {
    email: Type.Optional(Email),
    reason: Type.Optional(Reason),
    entries: Type.Optional(Type.Array(
      Type.Object({ email: Type.String({ maxLength: 254 }), reason: Type.Optional(Reason) }, { additionalProperties: false }),
      { minItems: 1, maxItems: MAX_BULK_SUPPRESSIONS, description: `Bulk form: up to ${MAX_BULK_SUPPRESSIONS} entries, added atomically; an entry without reason takes the top-level reason (default manual)` },
    )),
  },
  {
    additionalProperties: false,
    description: 'Either `email` (one address) or `entries` (bulk), not both.',
    examples: [
      { email: 'Jane.Doe@example.com', reason: 'manual' },
      { reason: 'import', entries: [{ email: 'a@example.com' }, { email: 'b@example.net', reason: 'complaint' }] },
    ],
  },
);
const EmailQuery = Type.Object({ email: Email });


/** The suppression list: check, list, add (one or bulk), re-subscribe (docs/suppression.md). */
export async function suppressionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock } = app.deps;

  app.get('/api/v1/suppression', {
    schema: {
      operationId: 'listSuppressions',
      summary: 'Check an address, or list the suppression list',
      description: 'With `email`: whether that address is suppressed for this account, always 200 (`suppressed: false` and nulls when it is not; 422 when it is not a valid address). Without `email`: the entries, newest first by default, filtered by `reason` and `q`, paginated with `limit`, `order` and `cursor`.',
      tags: ['suppression'],
      querystring: ListSuppressionQuery,
      response: {
        200: {
          ...Type.Union([Check, listResponse(Entry)]),
          description: 'With email: the check result. Without: one page of entries',
          examples: [
            { email: 'jane.doe@example.com', suppressed: true, reason: 'manual', createdAt: '2026-11-20T10:15:30.123Z' },
            { email: 'someone@example.com', suppressed: false, reason: null, createdAt: null },
            { data: [ENTRY_EXAMPLE, BOUNCE_EXAMPLE], nextCursor: 'djE6c3VwXzAxOWE2ZjBjM2IyZTdkMWE5YzRiNWU2ZjdhOGI5YzEy' },
          ],
        },
      },
    },
  }, async (request) => {
    const { email, reason, q, ...list } = request.query;
    if (email !== undefined) return checkSuppression(pool, request.auth.accountId, email);
    return listSuppressions(pool, request.auth.accountId, { reason, q }, pageOf(list));
  });

  app.post('/api/v1/suppression', {
    schema: {
      operationId: 'createSuppressions',
      summary: 'Suppress an address (or many)',
      description: `\`{email, reason}\` adds one address: 201 with the entry, or 200 with the existing entry, unchanged, when the address is already suppressed. \`{entries: [{email, reason}, …]}\` adds up to ${MAX_BULK_SUPPRESSIONS} in one transaction and answers 200 with counts; if any address is invalid nothing is added and the 422 names each one (\`entries.<index>.email\`).`,
      tags: ['suppression'],
      body: AddBody,
      response: {
        201: { ...Entry, description: 'The address was added', examples: [ENTRY_EXAMPLE] },
        200: { ...Type.Union([Entry, BulkResult]), description: 'Single form: the address was already suppressed, the existing entry unchanged. Bulk form: the counts', examples: [ENTRY_EXAMPLE, { created: 9_870, existing: 130 }] },
        422: problemResponse('Invalid address or reason; for the bulk form one error per bad entry, and nothing added', 'validation_failed', '1 invalid entry, nothing was added', [
          { field: 'entries.3.email', message: 'is not an email address' },
        ]),
      },
    },
  }, async (request, reply) => {
    const { email, reason, entries } = request.body;
    const accountId = request.auth.accountId;
    if (entries !== undefined) {
      if (email !== undefined) throw invalid('email', 'send either email or entries, not both');
      const now = clock.now();
      return reply.code(200).send(await inTransaction(pool, (tx) => suppressManyAddresses(tx, accountId, entries, reason, now)));
    }
    if (email === undefined) throw invalid('email', 'is required (or send entries for the bulk form)');
    const { entry, created } = await inTransaction(pool, (tx) => suppressAddress(tx, accountId, email, reason ?? 'manual', clock.now()));
    return reply.code(created ? 201 : 200).send(entry);
  });

  app.delete('/api/v1/suppression', {
    schema: {
      operationId: 'deleteSuppression',
      summary: 'Re-subscribe an address',
      description: 'Removes the address from the suppression list, so mail to it is sent again (and its subscriber records return to active). 404 when it was not suppressed.',
      tags: ['suppression'],
      querystring: EmailQuery,
      response: {
        200: {
          ...Type.Object({ email: Type.String({ description: 'The address, as given' }), suppressed: Type.Literal(false) }),
          description: 'The address was removed from the list',
          examples: [{ email: 'jane.doe@example.com', suppressed: false }],
        },
        404: problemResponse('The address was not suppressed', 'not_found', 'suppression entry for jane.doe@example.com not found'),
      },
    },
  }, async (request) => {
    const { email } = request.query;
    // address-status.ts composes the list change with the subscribers' status: one transaction.
    const removed = await inTransaction(pool, (tx) => resubscribeAddress(tx, request.auth.accountId, email));
    if (!removed) throw notFound(`suppression entry for ${email.trim()}`);
    return { email: email.trim(), suppressed: false as const };
  });
}
