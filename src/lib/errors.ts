/**
 * The error catalogue. Every error a client can see has a stable snake_case code, one HTTP
 * status and a default human message. Domains add their entries with `defineErrors` in their
 * own `errors.ts`; every entry lands in one list (`errorCatalogue()`), a code may be defined
 * once only (a second definition throws when the module loads), and docs/errors.md is
 * generated from that list (`npm run docs:errors`). Internals go to the log only.
 *
 * Naming: `<subject>_<condition>` in snake_case (`document_not_found`, `refresh_reused`,
 * `otp_locked`); a domain whose codes would otherwise collide prefixes them with the domain
 * (`mail_`, `ai_`). A caller may pass a message for its context (the SDK's texts differ for
 * operators and end users); the code and status stay those of the catalogue.
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

  /** The same error with a message naming where it happened (batch operation, import line). */
  withMessage(message: string, extra: Record<string, unknown> = this.extra): AppError {
    return new AppError(this.code, this.status, message, this.headers, extra);
  }
}

export interface ErrorDef {
  status: number;
  message: string;
  /** The status is a provider's own (4xx/5xx) passed through; `status` is the fallback. */
  passthrough?: boolean;
}

export interface CatalogueEntry extends ErrorDef {
  code: string;
  domain: string;
}

export interface ErrorOptions {
  headers?: Record<string, string>;
  /** Only for passthrough codes: the provider's own status. */
  status?: number;
}

type Factory = (message?: string, extra?: Record<string, unknown>, options?: ErrorOptions) => AppError;
type Factories<T> = { [K in keyof T]: Factory };

export const ERROR_CODE_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

const catalogue = new Map<string, CatalogueEntry>();

/** Every error code defined by the modules loaded so far, in definition order. */
export function errorCatalogue(): readonly CatalogueEntry[] {
  return [...catalogue.values()];
}

function register(domain: string, code: string, def: ErrorDef): void {
  if (!ERROR_CODE_PATTERN.test(code)) throw new Error(`error code '${code}' (${domain}) is not snake_case`);
  if (def.status < 400 || def.status > 599) throw new Error(`error code '${code}' (${domain}) has status ${def.status}`);
  const prior = catalogue.get(code);
  if (prior) throw new Error(`error code '${code}' is defined twice: by ${prior.domain} and by ${domain}`);
  catalogue.set(code, { code, domain, ...def });
}

function statusFor(code: string, def: ErrorDef, given: number | undefined): number {
  if (given === undefined) return def.status;
  if (!def.passthrough) throw new Error(`error code '${code}' has one status (${def.status}); it is not a passthrough code`);
  return given >= 400 && given < 600 ? given : def.status;
}

export function defineErrors<T extends Record<string, ErrorDef>>(domain: string, defs: T): Factories<T> {
  const out = {} as Factories<T>;
  for (const [code, def] of Object.entries(defs)) {
    register(domain, code, def);
    out[code as keyof T] = (message, extra, options = {}) =>
      new AppError(code, statusFor(code, def, options.status), message ?? def.message, options.headers ?? {}, extra);
  }
  return out;
}

/** Errors shared by every domain. */
export const Errors = defineErrors('common', {
  validation_failed: { status: 400, message: 'Request validation failed.' },
  bad_request: { status: 400, message: 'Bad request.' },
  invalid_url: { status: 400, message: 'The URL is not valid: a path segment has a malformed percent-encoding.' },
  path_parameter_too_long: { status: 414, message: 'A path parameter is too long.' },
  headers_too_large: { status: 431, message: 'The request headers are too large.' },
  request_timeout: { status: 408, message: 'The request took too long to arrive.' },
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
  project_busy: { status: 429, message: 'Too many concurrent requests for this project; please retry shortly.' },
  query_cancelled: { status: 503, message: 'The query took too long and was cancelled. Please retry.' },
});

/** 429 with the Retry-After header clients (and the SDK's RateLimitError) rely on. */
export function tooManyRequests(retryAfterSeconds: number, message = 'Too many requests, please try again later.'): AppError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return Errors.rate_limited(message, undefined, { headers: { 'retry-after': String(seconds) } });
}

/** Seconds a client is asked to wait when a backing service (database, storage) is away. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After: the database cannot be reached (down, restarting, refusing connections). */
export function databaseUnavailable(): AppError {
  return Errors.database_unavailable(undefined, undefined, { headers: { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_SECONDS) } });
}
