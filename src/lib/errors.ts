/**
 * The error catalogue. Every error a client can see has a stable snake_case code, an HTTP
 * status and a human message. Domains add their entries with `defineErrors` in their own
 * `errors.ts`. Internals go to the log only.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Extra members merged into the error body (e.g. `action`). Never secrets. */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export interface ErrorDef {
  status: number;
  message: string;
}

type Factories<T> = { [K in keyof T]: (message?: string, extra?: Record<string, unknown>) => AppError };

export function defineErrors<T extends Record<string, ErrorDef>>(defs: T): Factories<T> {
  const out = {} as Factories<T>;
  for (const [code, def] of Object.entries(defs)) {
    out[code as keyof T] = (message, extra) => new AppError(code, def.status, message ?? def.message, {}, extra);
  }
  return out;
}

/** Errors shared by every domain. */
export const Errors = defineErrors({
  validation_failed: { status: 400, message: 'Request validation failed.' },
  invalid_json: {
    status: 400,
    message: 'Check your request body syntax. Stray characters outside the JSON object are not allowed.',
  },
  json_too_deep: { status: 400, message: 'The JSON is nested too deeply.' },
  invalid_id: { status: 400, message: 'Invalid ID format.' },
  payload_too_large: { status: 413, message: 'Request body is too large.' },
  unsupported_media_type: { status: 415, message: 'Unsupported Content-Type.' },
  not_found: { status: 404, message: 'Not Found' },
  unauthorized: { status: 401, message: 'Unauthorized' },
  forbidden: { status: 403, message: 'Forbidden' },
  conflict: { status: 409, message: 'Conflict' },
  unprocessable: { status: 422, message: 'Unprocessable entity.' },
  rate_limited: { status: 429, message: 'Too many requests, please try again later.' },
  service_unavailable: { status: 503, message: 'Service unavailable.' },
  database_unavailable: { status: 503, message: 'The database is unavailable. Please retry shortly.' },
  upstream_failed: { status: 502, message: 'The upstream provider failed.' },
  upstream_timeout: { status: 504, message: 'The upstream provider timed out.' },
  internal: { status: 500, message: 'Internal server error.' },
});

/** 429 with the Retry-After header clients (and the SDK's RateLimitError) rely on. */
export function tooManyRequests(retryAfterSeconds: number, message = 'Too many requests, please try again later.'): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new AppError('rate_limited', 429, message, { 'retry-after': String(seconds) });
}

/** Seconds a client is asked to wait when a backing service (database, storage) is away. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: the database cannot be reached (down, restarting, refusing connections). */
export function databaseUnavailable(): AppError {
  const def = Errors.database_unavailable();
  return new AppError(def.code, def.status, def.message, { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
}
