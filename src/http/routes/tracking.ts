import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  clickTarget, createTrackingDeps, describeUnsubscribe, recordClick, recordOpen, unsubscribeByToken,
  type TrackingDeps, type UnsubscribeTarget, type Visit,
} from '../../domain/tracking/tracking.js';
import { TrackingLinks } from '../../domain/tracking/links.js';
import { verifyOpenToken } from '../../domain/tracking/tokens.js';
import { notFound } from '../../errors.js';
import { suppressAddress } from '../../domain/audience/address-status.js';
import { escapeHtml } from '../../templates/index.js';

/** A transparent 1×1 GIF89a (42 bytes). */
export const PIXEL_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** RFC 8058 bodies are one short field; anything bigger is not a mail client. */
const UNSUBSCRIBE_BODY_LIMIT = 16 * 1024;

const PAGE_HEADERS = {
  'cache-control': 'no-store, max-age=0',
  // The pages are self-contained: inline style only, the form posts back to this URL, and
  // no other site may frame them (an unsubscribe button is a clickjacking target).
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex',
};

/**
 * The recipient-facing endpoints (docs/tracking.md): open pixel, click redirect, unsubscribe
 * page and RFC 8058 one-click POST. Public (no API key), served on any Host so the customers'
 * `track.<domain>` CNAMEs reach them, and left out of the OpenAPI document: they are links in
 * mail, not API. Routes are wildcards because tokens outgrow the router's 100-character
 * parameter limit (a click token carries its URL).
 */
/** The token, past the route's fixed prefix. */
type Wildcard = { '*': string };

export async function trackingRoutes(app: FastifyInstance): Promise<void> {
  const deps: TrackingDeps = createTrackingDeps(app.deps.pool, new TrackingLinks(app.deps.config).tokenKey, suppressAddress);
  const visit = (request: FastifyRequest): Visit => ({ userAgent: request.headers['user-agent'], at: app.deps.clock.now() });
  const tokenOf = (request: FastifyRequest<{ Params: Wildcard }>): string => request.params['*'];
  const route = { schema: { hide: true }, config: { public: true } };

  // This scope only: RFC 8058 one-click POSTs come as application/x-www-form-urlencoded or
  // multipart/form-data ("List-Unsubscribe=One-Click"), some clients send an empty or other
  // body. The POST itself is the request, so every body is accepted and ignored.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: UNSUBSCRIBE_BODY_LIMIT }, (_request, _body, done) => done(null, undefined));

  // GET records an open; HEAD (Fastify's automatic HEAD route) only checks the token.
  // A database failure still serves the pixel: the event is lost, the mail still renders.
  app.get<{ Params: Wildcard }>('/t/o/*', route, async (request, reply) => {
    const token = tokenOf(request);
    let valid: boolean;
    if (request.method === 'HEAD') valid = verifyOpenToken(deps.key, token) !== null;
    else {
      try {
        valid = (await recordOpen(deps, token, visit(request))) !== null;
      } catch (err) {
        request.log.error({ err }, 'open not recorded');
        valid = verifyOpenToken(deps.key, token) !== null;
      }
    }
    if (!valid) throw notFound('Tracking link');
    return reply.header('cache-control', 'no-store, max-age=0').type('image/gif').send(PIXEL_GIF);
  });

  // GET records a click and redirects at once; HEAD redirects without recording (link
  // checkers). A database failure still redirects: the URL is signed, so it is ours to send.
  app.get<{ Params: Wildcard }>('/t/c/*', route, async (request, reply) => {
    const token = tokenOf(request);
    let location: string | undefined;
    if (request.method === 'HEAD') location = clickTarget(deps.key, token)?.location;
    else {
      try {
        location = (await recordClick(deps, token, visit(request)))?.location;
      } catch (err) {
        request.log.error({ err }, 'click not recorded');
        location = clickTarget(deps.key, token)?.location;
      }
    }
    if (!location) throw notFound('Tracking link');
    return reply.header('cache-control', 'no-store, max-age=0').redirect(location, 302);
  });

  // The footer link: a confirmation page, never an effect (scanners prefetch GET links).
  app.get<{ Params: Wildcard }>('/u/*', route, async (request, reply) => {
    const target = await describeUnsubscribe(deps, tokenOf(request));
    if (!target) throw notFound('Unsubscribe link');
    return sendPage(reply, confirmPage(target));
  });

  // RFC 8058 one-click, and the page's button: no cookies, no auth, no redirect; 200.
  app.post<{ Params: Wildcard }>('/u/*', route, async (request, reply) => {
    const done = await unsubscribeByToken(deps, tokenOf(request), visit(request));
    if (!done) throw notFound('Unsubscribe link');
    return sendPage(reply, donePage(done));
  });
}

function sendPage(reply: FastifyReply, html: string): FastifyReply {
  return reply.headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;background:#f9fafb}
main{max-width:28rem;margin:12vh auto;padding:2rem;background:#fff;border:1px solid #e5e7eb;border-radius:12px}
h1{margin:0 0 1rem;font-size:1.5rem}
button{font:inherit;padding:.6rem 1.4rem;border:0;border-radius:8px;background:#111827;color:#fff;cursor:pointer}
strong{word-break:break-all}
</style>
</head>
<body><main>${body}</main></body>
</html>
`;
}

function confirmPage(t: UnsubscribeTarget): string {
  return page(
    'Unsubscribe',
    `<h1>Unsubscribe</h1>
<p>Stop all emails from <strong>${escapeHtml(t.sender)}</strong> to <strong>${escapeHtml(t.email)}</strong>?</p>
<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`,
  );
}

function donePage(t: UnsubscribeTarget): string {
  return page(
    'You are unsubscribed',
    `<h1>You are unsubscribed</h1>
<p><strong>${escapeHtml(t.email)}</strong> will no longer receive emails from <strong>${escapeHtml(t.sender)}</strong>.</p>`,
  );
}
