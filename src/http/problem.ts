import { Type } from 'typebox';
import { ERROR_CODES, type ErrorCode, type FieldError } from '../errors.js';

/** HTTP status for each error code of the registry (docs/architecture.md#api-conventions). Only http/ knows this. */
export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_json: 400,
  invalid_report: 400,
  invalid_url: 400,
  unsupported_media_type: 415,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  idempotency_conflict: 409,
  invalid_state: 409,
  account_at_risk: 409,
  payload_too_large: 413,
  validation_failed: 422,
  sender_domain_unverified: 422,
  recipient_suppressed: 422,
  template_error: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
  unavailable: 503,
};

/** RFC 9457 problem document, as every error response carries it. */
export const Problem = Type.Object(
  {
    type: Type.String({ description: 'URI of the problem type: /docs/errors#<code>' }),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: Type.String({ description: 'Stable machine-readable error code' }),
    instance: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
  },
  { additionalProperties: true, $id: 'Problem', examples: [{ type: '/docs/errors#validation_failed', title: 'Validation failed', status: 422, detail: 'to: must be an email address', code: 'validation_failed', errors: [{ field: 'to', message: 'must be an email address' }] }] },
);

/** Error responses every authenticated route can give, merged into each route's schema. */
export const COMMON_ERROR_RESPONSES: Record<number, { description: string }> = {
  400: { description: 'Malformed JSON body' },
  401: { description: 'Missing, malformed, unknown or revoked API key' },
  413: { description: 'Body over the size limit' },
  422: { description: 'Validation failed' },
  429: { description: 'Rate limit or quota exceeded; see Retry-After' },
  500: { description: 'Internal error; the body carries a requestId' },
};

/**
 * An error response for a route's OpenAPI schema, served as application/problem+json, with
 * an example built by the same code as real problems (so titles and statuses cannot drift).
 */
export function problemResponse(description: string, code: ErrorCode, detail: string, errors?: FieldError[], members?: Record<string, unknown>) {
  return {
    description,
    content: {
      'application/problem+json': {
        schema: Type.Object(Problem.properties, { additionalProperties: true, examples: [problemBody(code, detail, errors, members)] }),
      },
    },
  };
}

/** The members every problem document has; the error handler adds instance and requestId. */
export function problemBody(code: ErrorCode, detail: string, errors?: FieldError[], members?: Record<string, unknown>) {
  return {
    type: `/docs/errors#${code}`,
    title: ERROR_CODES[code],
    status: STATUS_OF[code],
    detail,
    code,
    ...(errors ? { errors } : {}),
    ...members,
  };
}
