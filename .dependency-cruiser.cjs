/**
 * The layers of src/ and the rooms of src/domain/, kept by `npm run lint` (docs/architecture.md
 * draws the same map). A rule here is the architecture: change the two together.
 *
 * Layers, lowest first. Each may import only the layers below it:
 *   kernel files (src/*.ts: config with data-dir, worker-heap, package-root and its delivery-policy with sending-identity, clock, ids, errors, logging) and lib/ — import no other layer
 *   templates/ (the template language)     — kernel, lib
 *   db/                                   — kernel, lib (mail/ for types only)
 *   mail/                                 — kernel, lib
 *   queue/                                — db, kernel, lib
 *   domain/                               — db, mail, queue, templates, kernel, lib
 *   delivery/                             — domain, db, mail, queue, templates, kernel, lib
 *   http/, inbound/, submission/          — everything below, never db/ from a route
 *   workers/                              — everything below except http/ and cli/
 *   cli/, server.ts, bootstrap.ts, compile-cache.ts, bin/ — the entry points
 */

/** The rooms of src/domain/, lowest first: a room imports only rooms before it (and itself). */
const DOMAIN_ROOMS = [
  // The kernel: value types and records every room uses (addresses, events, texts, accounts,
  // the suppression list, stored templates) and the rule language.
  { name: 'kernel', path: '^src/domain/[^/]+\\.ts$' },
  { name: 'rules', path: '^src/domain/rules/' },
  { name: 'keys', path: '^src/domain/keys/' },
  { name: 'users', path: '^src/domain/users/' },
  { name: 'domains', path: '^src/domain/domains/' },
  { name: 'webhooks', path: '^src/domain/webhooks/' },
  { name: 'tracking', path: '^src/domain/tracking/' },
  { name: 'sending', path: '^src/domain/sending/' },
  { name: 'stats', path: '^src/domain/stats/' },
  { name: 'automations', path: '^src/domain/automations/' },
  { name: 'audience', path: '^src/domain/audience/' },
  { name: 'bounces', path: '^src/domain/bounces/' },
  { name: 'campaigns', path: '^src/domain/campaigns/' },
];

const roomRules = DOMAIN_ROOMS.slice(0, -1).map((room, i) => ({
  name: `domain-room-${room.name}`,
  comment: `${room.name} sits below ${DOMAIN_ROOMS.slice(i + 1).map((r) => r.name).join(', ')}: it announces what happened (an event or a callback passed in) instead of calling up.`,
  severity: 'error',
  from: { path: room.path },
  to: { path: DOMAIN_ROOMS.slice(i + 1).map((r) => r.path) },
}));

const KERNEL_FILES = '^src/(config|data-dir|worker-heap|package-root|delivery-policy|sending-identity|clock|ids|errors|logging)\\.ts$';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No module imports itself through others: a cycle is a knot a reader cannot start from either end of.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'kernel-and-lib-import-nothing-above',
      severity: 'error',
      from: { path: [KERNEL_FILES, '^src/lib/'] },
      to: { path: '^src/', pathNot: [KERNEL_FILES, '^src/lib/'] },
    },
    {
      name: 'templates-is-a-language',
      comment: 'src/templates/ (the template language) knows nothing of storage, mail or the domain.',
      severity: 'error',
      from: { path: '^src/templates/' },
      to: { path: '^src/', pathNot: [KERNEL_FILES, '^src/lib/', '^src/templates/'] },
    },
    {
      name: 'db-is-storage',
      comment: 'db/ runs SQL; it imports the kernel and lib only (types of mail/ for the rows it stores).',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/', pathNot: [KERNEL_FILES, '^src/lib/', '^src/db/', '^src/mail/'] },
    },
    {
      name: 'db-imports-mail-types-only',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/mail/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'mail-is-protocol',
      comment: 'mail/ (MIME, SMTP, DKIM, DNS, bounce reading) knows nothing of accounts, storage or the domain.',
      severity: 'error',
      from: { path: '^src/mail/' },
      to: { path: '^src/', pathNot: [KERNEL_FILES, '^src/lib/', '^src/mail/'] },
    },
    {
      name: 'queue-over-db',
      comment: 'queue/ (the message and webhook queues) builds on db/ only.',
      severity: 'error',
      from: { path: '^src/queue/' },
      to: { path: '^src/', pathNot: [KERNEL_FILES, '^src/lib/', '^src/queue/', '^src/db/'] },
    },
    {
      name: 'domain-below-the-processes',
      comment: 'domain/ never imports what runs it: http/, workers/, cli/, inbound/, submission/, delivery/, the entry points.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: [KERNEL_FILES, '^src/lib/', '^src/domain/', '^src/db/', '^src/mail/', '^src/queue/', '^src/templates/'] },
    },
    {
      name: 'delivery-below-the-processes',
      comment: 'delivery/ (the delivery path) is run by workers/ and cli/; it imports nothing that runs it.',
      severity: 'error',
      from: { path: '^src/delivery/' },
      to: { path: ['^src/http/', '^src/workers/', '^src/cli/', '^src/inbound/', '^src/submission/', '^src/bin/', '^src/server\\.ts$', '^src/bootstrap\\.ts$'] },
    },
    {
      name: 'http-and-inbound-not-workers-or-cli',
      severity: 'error',
      from: { path: ['^src/http/', '^src/inbound/', '^src/submission/'] },
      to: { path: ['^src/workers/', '^src/cli/', '^src/bin/', '^src/server\\.ts$'] },
    },
    {
      name: 'workers-not-http-or-cli',
      severity: 'error',
      from: { path: '^src/workers/' },
      to: { path: ['^src/http/', '^src/cli/', '^src/inbound/', '^src/submission/', '^src/bin/', '^src/server\\.ts$'] },
    },
    {
      name: 'routes-call-the-domain',
      comment: 'A route calls the domain (or http/ helpers), never db/ directly (row types aside).',
      severity: 'error',
      from: { path: '^src/http/routes/', pathNot: KNOWN_ROUTE_EXCEPTIONS() },
      to: { path: '^src/db/', dependencyTypesNot: ['type-only'] },
    },
    ...roomRules,
  ],
  options: {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

/**
 * Routes allowed to reach db/: the health check asks whether the schema's migrations are all
 * applied (the process's state, not an account's data).
 */
function KNOWN_ROUTE_EXCEPTIONS() {
  return ['^src/http/routes/health\\.ts$'];
}
