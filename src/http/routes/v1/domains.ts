import { finishPage, ListQuery, listResponse, pageOf } from '../../pagination.js';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import {
  markVerifiedForDevelopment,
  createDomain, dnsTargetsOf, getDomain, listDomainPage, removeDomain, verifyDomain, verifyTrackingDomain,
} from '../../../domain/domains/domains.js';
import { createMailDns } from '../../../mail/dns.js';
import { problemResponse } from '../../problem.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(s: T) => Type.Union([s, Type.Null()]);
const Timestamp = (description: string) => Type.String({ format: 'date-time', description });

const DnsRecord = Type.Object({
  type: Type.Union([Type.Literal('TXT'), Type.Literal('MX'), Type.Literal('CNAME')], { description: 'DNS record type' }),
  name: Type.String({ description: 'Fully qualified name to publish the record at' }),
  value: Type.String({ description: 'Record value (TXT content, MX exchange or CNAME target)' }),
  priority: Type.Optional(Type.Integer({ description: 'MX preference (MX records only)' })),
  purpose: Type.Union([Type.Literal('dkim'), Type.Literal('dkim_ed25519'), Type.Literal('return_path'), Type.Literal('spf'), Type.Literal('dmarc'), Type.Literal('tracking')], { description: 'dkim: RSA-2048 key, decides verification; dkim_ed25519: second signature (RFC 8463); return_path: MX of the bounce domain; spf: on the bounce domain (SPF checks MAIL FROM); dmarc: suggestion, any DMARC record counts; tracking: optional white-label CNAME' }),
  required: Type.Boolean({ description: 'Whether the domain needs this record to become verified (only the RSA DKIM record)' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('missing'), Type.Literal('mismatch'), Type.Literal('temp_error')], { description: 'Result of the last check; pending = never checked' }),
  checkedAt: Nullable(Timestamp('When this record was last looked up')),
  detail: Nullable(Type.String({ description: 'What the last check found when it did not pass' })),
});

const DomainSchema = Type.Object({
  id: Type.String({ description: 'dom_… identifier' }),
  name: Type.String({ description: 'Lower-case ASCII (punycode for IDNs)' }),
  status: Type.Union([Type.Literal('pending'), Type.Literal('verified')], { description: 'verified once the RSA DKIM record matched; stays verified if a later check fails' }),
  records: Type.Array(DnsRecord),
  tracking: Type.Object({
    host: Type.String({ description: 'track.<domain>' }),
    target: Type.String({ description: 'What track.<domain> must be a CNAME to (POSTLINE_TRACKING_HOST)' }),
    status: Type.Union([Type.Literal('pending'), Type.Literal('verified'), Type.Literal('failed')], { description: 'verified: new messages use http://track.<domain>/ for links and the pixel' }),
    checkedAt: Nullable(Timestamp('Last tracking CNAME check')),
  }),
  createdAt: Timestamp('ISO 8601 UTC with milliseconds'),
  verifiedAt: Nullable(Timestamp('First successful verification')),
  checkedAt: Nullable(Timestamp('Last full DNS check')),
});

const ID = 'dom_019a6f0c3b2e7d1a9c4b5e6f7a8b9c20';
const RSA_TXT = 'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAnSpMOU12Vq0LGQkIxE9cjspjqdtYyUSd72Q9ggQX1rWIpbc4m9vOLaAUJE7bBQ33oyuB2PafjWbmDwldKCeApf5jnqsbABVj/PyFUsove+9prV3BIDsga+YoxMYAlQOgexxQ1y8SbcYyehQAvmpgogKrCFDNR3Tbn1tqzJQHz4V2L35EkC5jbGU3QrlotjQUfacLnkwFKfaX1mDQ2S6A9KuhDqaZufdyPX9s1S7TzB5EbWsJMbMozdh7oaVqGQU+SNeENBUnydUILTctFZd35qkMEzoJc2VTb7DRYzOUXx22Zvs9+Du+oxkvmOBeuO/vUFb38O+M+R6VqGdBJyb/mQIDAQAB';
const EXAMPLE_RECORDS = [
  { type: 'TXT', name: 'plr-3f9c1a0b._domainkey.example.com', value: RSA_TXT, purpose: 'dkim', required: true },
  { type: 'TXT', name: 'ple-3f9c1a0b._domainkey.example.com', value: 'v=DKIM1; k=ed25519; p=CvfgJNPi8JEvTMImaNybWRlVlmKoZTSE6pyM3xRfdYE=', purpose: 'dkim_ed25519', required: false },
  { type: 'MX', name: 'bounces.example.com', value: 'mail.postline.example.net', priority: 10, purpose: 'return_path', required: false },
  { type: 'TXT', name: 'bounces.example.com', value: 'v=spf1 a:mail.postline.example.net ~all', purpose: 'spf', required: false },
  { type: 'TXT', name: '_dmarc.example.com', value: 'v=DMARC1; p=none;', purpose: 'dmarc', required: false },
  { type: 'CNAME', name: 'track.example.com', value: 'mail.postline.example.net', purpose: 'tracking', required: false },
];
const PENDING_EXAMPLE = {
  id: ID,
  name: 'example.com',
  status: 'pending',
  records: EXAMPLE_RECORDS.map((r) => ({ ...r, status: 'pending', checkedAt: null, detail: null })),
  tracking: { host: 'track.example.com', target: 'mail.postline.example.net', status: 'pending', checkedAt: null },
  createdAt: '2026-11-20T10:15:30.123Z',
  verifiedAt: null,
  checkedAt: null,
};
const CHECKED = '2026-11-20T10:20:02.456Z';
const VERIFIED_EXAMPLE = {
  ...PENDING_EXAMPLE,
  status: 'verified',
  records: EXAMPLE_RECORDS.map((r) => ({
    ...r,
    status: r.purpose === 'tracking' ? 'missing' : 'verified',
    checkedAt: CHECKED,
    detail: r.purpose === 'tracking' ? 'no CNAME record at this name' : r.purpose === 'dmarc' ? 'v=DMARC1; p=none;' : null,
  })),
  tracking: { host: 'track.example.com', target: 'mail.postline.example.net', status: 'failed', checkedAt: CHECKED },
  verifiedAt: CHECKED,
  checkedAt: CHECKED,
};

const CreateBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 300, description: 'Domain name, e.g. example.com or an IDN (stored in punycode); no trailing dot' }) },
  { additionalProperties: false, examples: [{ name: 'example.com' }] },
);
const IdParams = Type.Object({ id: Type.String({ description: 'Domain id (dom_…)' }) });

const NotFound = problemResponse('No domain with this id in this account (ids of other accounts are not found either)', 'not_found', `domain ${ID} not found`);
const Conflict = problemResponse('The account already has this domain', 'conflict', 'This account already has the domain example.com', [
  { field: 'name', message: 'is already added to this account' },
]);
const Unprocessable = problemResponse('validation_failed: not a usable domain name', 'validation_failed', 'name: must have at least two labels, like example.com', [
  { field: 'name', message: 'must have at least two labels, like example.com' },
]);

/** Sender domains: DKIM keys, DNS records to publish, verification, white-label tracking (docs/domains.md). */
export async function domainRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { pool, clock, config } = app.deps;
  const targets = dnsTargetsOf(config);
  const checkContext = () => ({ dns: createMailDns({ servers: config.dnsServers }), targets, now: clock.now() });

  app.get('/api/v1/domains', {
    schema: {
      operationId: 'listDomains',
      summary: 'List sender domains',
      description: 'Domains of the account with their records and last check results, newest first by default; paginate with `limit`, `order` and `cursor`.',
      tags: ['domains'],
      querystring: ListQuery,
      response: { 200: { ...listResponse(DomainSchema), examples: [{ data: [VERIFIED_EXAMPLE], nextCursor: null }] } },
    },
  }, async (request) => {
    const page = pageOf(request.query);
    return finishPage(await listDomainPage(pool, request.auth.accountId, page, targets), page, (d) => d.id);
  });

  app.post('/api/v1/domains', {
    schema: {
      operationId: 'createDomain',
      summary: 'Add a sender domain',
      description: 'Generates an RSA-2048 and an Ed25519 DKIM key (private keys are stored encrypted and never returned) and answers with the DNS records to publish. Then call `POST /api/v1/domains/{id}/verify`.',
      tags: ['domains'],
      body: CreateBody,
      response: { 201: { ...DomainSchema, examples: [PENDING_EXAMPLE] }, 409: Conflict, 422: Unprocessable },
    },
  }, async (request, reply) => {
    const domain = await createDomain(pool, { accountId: request.auth.accountId, name: request.body.name, now: clock.now() }, { secret: config.secret, targets });
    return reply.code(201).send(domain);
  });

  app.get('/api/v1/domains/:id', {
    schema: {
      operationId: 'getDomain',
      summary: 'Get a sender domain',
      description: 'The domain, the records to publish and the result of the last check of each.',
      tags: ['domains'],
      params: IdParams,
      response: { 200: { ...DomainSchema, examples: [VERIFIED_EXAMPLE] }, 404: NotFound },
    },
  }, async (request) => getDomain(pool, request.auth.accountId, request.params.id, targets));

  app.post('/api/v1/domains/:id/verify', {
    schema: {
      operationId: 'verifyDomain',
      summary: 'Check the DNS records',
      description: 'Looks every record up through the configured resolver and stores each status (`verified`, `missing`, `mismatch`, `temp_error`). The domain becomes `verified` when its RSA DKIM record matches; once verified it stays so when a later check fails (record statuses still update). The tracking CNAME is checked too.',
      tags: ['domains'],
      params: IdParams,
      response: { 200: { ...DomainSchema, examples: [VERIFIED_EXAMPLE] }, 404: NotFound },
    },
  }, async (request) => verifyDomain(pool, request.auth.accountId, request.params.id, checkContext()));

  app.post('/api/v1/domains/:id/tracking/verify', {
    schema: {
      operationId: 'verifyDomainTracking',
      summary: 'Check the white-label tracking CNAME',
      description: 'Checks that `track.<domain>` is a CNAME to the tracking host. Confirmed → `tracking.status` `verified` and new messages from the domain use `http://track.<domain>/` for links, the pixel and the unsubscribe page; absent or pointing elsewhere → `failed` (messages use the default host again). A temporary DNS failure leaves the status as it was.',
      tags: ['domains'],
      params: IdParams,
      response: {
        200: { ...DomainSchema, examples: [{ ...VERIFIED_EXAMPLE, tracking: { ...VERIFIED_EXAMPLE.tracking, status: 'verified' } }] },
        404: NotFound,
      },
    },
  }, async (request) => verifyTrackingDomain(pool, request.auth.accountId, request.params.id, checkContext()));

  app.post('/api/v1/domains/:id/mark-verified', {
    schema: {
      operationId: 'markDomainVerified',
      summary: 'Mark a domain verified without DNS (development servers only)',
      description: 'Only when the server captures mail instead of delivering it (POSTLINE_DELIVERY=capture): the domain becomes `verified` without a DNS check, so sends from it can be tried locally. Anywhere else 403 `forbidden`.',
      tags: ['domains'],
      params: IdParams,
      response: { 200: { ...DomainSchema, examples: [VERIFIED_EXAMPLE] }, 403: problemResponse('Not a development server (POSTLINE_DELIVERY is not capture)', 'forbidden', 'Marking a domain verified without DNS is for development servers (POSTLINE_DELIVERY=capture); publish the records and press Verify'), 404: NotFound },
    },
  }, async (request) => {
    await markVerifiedForDevelopment(pool, request.auth.accountId, request.params.id, config.delivery, clock.now());
    return getDomain(pool, request.auth.accountId, request.params.id, targets);
  });

  app.delete('/api/v1/domains/:id', {
    schema: {
      operationId: 'deleteDomain',
      summary: 'Delete a sender domain',
      description: 'Removes the domain and its keys. Mail from it is refused from then on (`sender_domain_unverified`); the DNS records may be removed.',
      tags: ['domains'],
      params: IdParams,
      response: { 204: Type.Null({ description: 'Deleted' }), 404: NotFound },
    },
  }, async (request, reply) => {
    await removeDomain(pool, request.auth.accountId, request.params.id);
    return reply.code(204).send(null);
  });
}
