import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { AppError, type ErrorCode, type FieldError } from '../../errors.js';
import { problemBody, STATUS_OF } from '../problem.js';

export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  extra: { errors?: FieldError[]; retryAfter?: number; members?: Record<string, unknown> } = {},
): FastifyReply {
  if (extra.retryAfter !== undefined) reply.header('Retry-After', String(extra.retryAfter));
  const { errors, members } = extra;
  return reply
    .code(STATUS_OF[code])
    .type('application/problem+json')
    .send({ ...problemBody(code, detail, errors, members), instance: request.url.split('?')[0], requestId: request.id });
}

/** "/body/from/email" or "body.from.email" → "from.email" */
function fieldOf(err: { instancePath?: string; params?: Record<string, unknown> }, context: string | undefined): string {
  let path = (err.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.');
  const missing = err.params?.missingProperty as string | undefined;
  if (missing) path = path ? `${path}.${missing}` : missing;
  const extra = err.params?.additionalProperty as string | undefined;
  if (extra) path = path ? `${path}.${extra}` : extra;
  if (context && context !== 'body') path = path ? `${context}.${path}` : context;
  return path || context || 'body';
}

function validationErrors(error: FastifyError): FieldError[] {
  const context = (error as FastifyError & { validationContext?: string }).validationContext;
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const v of error.validation ?? []) {
    const field = fieldOf(v as never, context);
    const message = v.keyword === 'additionalProperties' ? 'is not a known field' : (v.message ?? 'is invalid');
    const k = field + message;
    if (!seen.has(k)) {
      seen.add(k);
      out.push({ field, message });
    }
  }
  return out;
}

/**
 * The one place errors become responses. Domain errors carry a code; Fastify's own errors
 * (bad JSON, size, validation) are mapped to the same registry; anything else is a 500 whose
 * details stay in the log, never in the response.
 */
export const errorsPlugin = fp(async (app: FastifyInstance) => {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      return sendProblem(request, reply, error.code, error.message, {
        errors: error.errors,
        retryAfter: error.retryAfter,
        members: error.extra,
      });
    }
    if (error.validation) {
      const errors = validationErrors(error);
      return sendProblem(request, reply, 'validation_failed', errors.map((e) => `${e.field}: ${e.message}`).join('; '), { errors });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(request, reply, 'payload_too_large', `Request body exceeds the limit of ${app.initialConfig.bodyLimit} bytes`);
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(request, reply, 'invalid_json', `Content-Type must be application/json, got "${request.headers['content-type'] ?? ''}"`);
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendProblem(request, reply, 'invalid_json', 'Body is empty but Content-Type is application/json');
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendProblem(request, reply, 'invalid_json', 'Content-Length does not match the body');
    }
    if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return sendProblem(request, reply, 'invalid_json', 'Body is not valid JSON');
    }
    if (error.statusCode === 413) return sendProblem(request, reply, 'payload_too_large', 'Request body too large');
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendProblem(request, reply, 'invalid_json', error.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, 'internal_error', `Something went wrong on our side; quote request id ${request.id} when reporting it`);
  });

  app.setNotFoundHandler((request, reply) =>
    app.dashboardShell?.(request, reply) ?? sendProblem(request, reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`),
  );
});
