/** One field's complaint in a validation problem. */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * Every failure of a call: an RFC 9457 problem from the server (`status`, its stable `code`,
 * `errors[]` for validation), or one that never got an answer (`status` 0, `code` `timeout`
 * or `network_error`). Branch on `code`; the codes are listed in docs/errors.md.
 */
export class PostlineError extends Error {
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly errors: FieldError[];
  /** The server's X-Request-Id, to quote when reporting a problem. */
  readonly requestId: string | null;
  /** Seconds the server asked to wait (429, quota_exceeded), when it said. */
  readonly retryAfter: number | null;
  /** The whole problem document as received. */
  readonly problem: Record<string, unknown>;

  constructor(init: { status: number; code: string; title: string; detail: string; errors?: FieldError[]; requestId?: string | null; retryAfter?: number | null; problem?: Record<string, unknown> }) {
    super(init.detail);
    this.name = 'PostlineError';
    this.status = init.status;
    this.code = init.code;
    this.title = init.title;
    this.errors = init.errors ?? [];
    this.requestId = init.requestId ?? null;
    this.retryAfter = init.retryAfter ?? null;
    this.problem = init.problem ?? {};
  }

  /** The error of a non-2xx response; a body that is not a problem document still gives one. */
  static async fromResponse(res: Response): Promise<PostlineError> {
    const text = await res.text().catch(() => '');
    let problem: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') problem = parsed as Record<string, unknown>;
    } catch {
      // not JSON: a proxy's error page, say
    }
    const str = (v: unknown, fallback: string) => (typeof v === 'string' ? v : fallback);
    return new PostlineError({
      status: res.status,
      code: str(problem.code, `http_${res.status}`),
      title: str(problem.title, res.statusText || `HTTP ${res.status}`),
      detail: str(problem.detail, text.slice(0, 200) || `HTTP ${res.status}`),
      errors: Array.isArray(problem.errors) ? (problem.errors as FieldError[]) : [],
      requestId: res.headers.get('x-request-id'),
      retryAfter: retryAfterSeconds(res.headers.get('retry-after')),
      problem,
    });
  }
}

/** Retry-After as seconds: a number of seconds or an HTTP date (RFC 9110 §10.2.3). */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
