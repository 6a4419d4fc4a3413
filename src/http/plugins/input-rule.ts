import { isUtf8 } from 'node:buffer';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { findTextProblems } from '../../domain/text.js';
import { AppError, type FieldError } from '../../errors.js';
import { jsonDepthExceeds, MAX_JSON_DEPTH, queryIsUtf8 } from '../input-text.js';
import { NOT_PLAIN, parsePlainJson } from '../json-body.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Body paths ("emails", "subscribers"; "" for a raw, non-JSON body) whose strings the handler
     * checks itself, because it answers item by item (batch send, imports): a bad item must
     * fail alone, not the whole request.
     */
    bodyTextCheckedByHandler?: readonly string[];
  }
}

/** Request headers the application reads; their values reach the database or a hash. */
const READ_HEADERS = ['authorization', 'x-api-key', 'idempotency-key', 'x-fbl-key'] as const;

function headerProblems(request: FastifyRequest): FieldError[] {
  const out: FieldError[] = [];
  for (const name of READ_HEADERS) {
    const v = request.headers[name];
    const values = Array.isArray(v) ? v : v === undefined ? [] : [v];
    if (values.some((x) => x.includes('\u0000'))) out.push({ field: `headers.${name}`, message: 'must not contain the NUL character (U+0000)' });
  }
  return out;
}

function textRefusal(errors: FieldError[]): AppError {
  return new AppError('validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
}

/**
 * One input rule for every route (docs/errors.md, "Text and nesting"): before a handler or a
 * schema sees a request,
 * - a JSON body must be UTF-8 and nest at most MAX_JSON_DEPTH deep (400 invalid_json), checked
 *   on the bytes, so a 100,000-deep array never reaches a recursive parser;
 * - no string in the body, the query, the path parameters or the headers the app reads may hold
 *   NUL or an unpaired surrogate, and the query's percent-escapes must decode to UTF-8
 *   (422 validation_failed, each field named), nor any number be infinite (`?limit=1e309`).
 * Routes added later get it without doing anything; a route answering per item opts its items
 * out (bodyTextCheckedByHandler) and checks them with domain/text.ts.
 */
export const inputRulePlugin = fp(async (app: FastifyInstance) => {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    // Clients that always send `Content-Type: application/json` (fetch wrappers, SDKs) may do
    // so on an operation that takes no body (`POST /campaigns/{id}/send`): nothing to parse.
    if (bytes.length === 0 && request.routeOptions.schema?.body === undefined) return done(null, undefined);
    if (!isUtf8(bytes)) return done(new AppError('invalid_json', 'Body is not valid UTF-8'), undefined);
    if (jsonDepthExceeds(bytes, MAX_JSON_DEPTH)) {
      return done(new AppError('invalid_json', `Body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    }
    const text = bytes.toString('utf8');
    // Most bodies need none of the default parser's prototype-key scans (json-body.ts).
    const value = parsePlainJson(text);
    if (value !== NOT_PLAIN) return done(null, value);
    parseJson(request, text, done);
  });

  app.addHook('preValidation', (request, _reply, done) => {
    const errors: FieldError[] = [];
    const url = request.raw.url ?? '';
    const q = url.indexOf('?');
    if (q >= 0 && !queryIsUtf8(url.slice(q + 1))) errors.push({ field: 'querystring', message: 'must be percent-encoded UTF-8' });
    errors.push(...findTextProblems(request.params, 'params'), ...findTextProblems(request.query, 'querystring'), ...headerProblems(request));
    const skip = request.routeOptions.config.bodyTextCheckedByHandler ?? [];
    if (!(typeof request.body === 'string' && skip.includes(''))) errors.push(...findTextProblems(request.body, '', { skip: skip.filter((p) => p !== '') }));
    done(errors.length > 0 ? textRefusal(errors) : undefined);
  });

  // Schema coercion turns `?limit=1e309` into Infinity, which JSON Schema's integer and
  // maximum checks let through (Ajv): refused here, after coercion, before any handler.
  app.addHook('preHandler', (request, _reply, done) => {
    const errors = [...findTextProblems(request.query, 'querystring'), ...findTextProblems(request.params, 'params')];
    done(errors.length > 0 ? textRefusal(errors) : undefined);
  });
});
