import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { PACKAGE_ROOT } from '../../package-root.js';

/** web/dist, found from the package root wherever this code runs from (src/ or the bundled dist/). */
export const DASHBOARD_DIR = join(PACKAGE_ROOT, 'web', 'dist') + '/';

/** Paths the server owns; everything else that asks for HTML is a dashboard route. */
const SERVER_PATHS = /^\/(api|t|u|docs|healthz|readyz|metrics|assets)(\/|$)/;

// The app is ours alone: scripts and styles from this origin only, nothing may frame it.
// Previews of mail are iframes with srcdoc and an empty sandbox, so their content runs no
// script and reaches nothing of the dashboard; their images may come from anywhere.
const CSP = "default-src 'self'; img-src 'self' data: https: http:; style-src 'self' 'unsafe-inline'; frame-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

declare module 'fastify' {
  interface FastifyInstance {
    /** Answers a dashboard (client-side) route with the app, or null when this request is not one. */
    dashboardShell: ((request: FastifyRequest, reply: FastifyReply) => FastifyReply | null) | null;
  }
}

/**
 * Serves the dashboard (web/, built by `npm run build`) at `/`: the hashed assets with a
 * long cache, and index.html for `/` and for every client route (`/messages`, `/settings/keys`…)
 * so that a page's URL survives a reload. The API's 404s stay problem documents.
 */
export const dashboardPlugin = fp(async (app: FastifyInstance) => {
  const indexPath = DASHBOARD_DIR + 'index.html';
  const built = existsSync(indexPath);
  const index = built ? readFileSync(indexPath) : null;
  const sendIndex = (reply: FastifyReply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .header('Content-Security-Policy', CSP)
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'same-origin')
      .send(index ?? 'The dashboard is not built: run `npm run build` (web/dist is missing).');

  if (built) {
    await app.register(fastifyStatic, {
      root: DASHBOARD_DIR,
      prefix: '/',
      wildcard: false,
      index: false,
      serve: true,
      setHeaders: (res, path) => {
        res.header('X-Content-Type-Options', 'nosniff');
        if (path.includes('/assets/')) res.header('Cache-Control', 'public, max-age=31536000, immutable');
      },
    });
  }
  app.get('/', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => (built ? sendIndex(reply) : sendIndex(reply.code(503))));
  app.decorate('dashboardShell', (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    const path = request.url.split('?')[0];
    if (SERVER_PATHS.test(path) || path.includes('.')) return null;
    if (!(request.headers.accept ?? '').includes('text/html')) return null;
    return built ? sendIndex(reply) : sendIndex(reply.code(503));
  });
});
