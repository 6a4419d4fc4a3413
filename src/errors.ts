/**
 * The error-code registry (docs/architecture.md#api-conventions). Domain code throws AppError with one of these
 * codes; only the HTTP layer knows which status each maps to.
 */
export const ERROR_CODES = {
  invalid_json: 'Malformed request body',
  invalid_report: 'Unreadable report',
  invalid_url: 'Malformed URL',
  unsupported_media_type: 'Unsupported content type',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  conflict: 'Conflict',
  idempotency_conflict: 'Idempotency key conflict',
  invalid_state: 'Invalid state',
  account_at_risk: 'Account at risk',
  payload_too_large: 'Payload too large',
  validation_failed: 'Validation failed',
  sender_domain_unverified: 'Sender domain not verified',
  recipient_suppressed: 'Recipient suppressed',
  template_error: 'Template error',
  rate_limited: 'Too many requests',
  quota_exceeded: 'Quota exceeded',
  internal_error: 'Internal server error',
  unavailable: 'Service unavailable',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface FieldError {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errors?: FieldError[];
  /** Seconds, for rate_limited / quota_exceeded. */
  readonly retryAfter?: number;
  /** Extra members for the problem body (e.g. template error line/column). */
  readonly extra?: Record<string, unknown>;

  constructor(
    code: ErrorCode,
    detail: string,
    opts: { errors?: FieldError[]; retryAfter?: number; extra?: Record<string, unknown> } = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.code = code;
    this.errors = opts.errors;
    this.retryAfter = opts.retryAfter;
    this.extra = opts.extra;
  }
}

/** Shorthand for a one-field validation failure. */
export function invalid(field: string, message: string): AppError {
  return new AppError('validation_failed', `${field}: ${message}`, { errors: [{ field, message }] });
}

export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} not found`);
}
