/**
 * Every failure is a PlinthError carrying the server's error envelope
 * (`{success: false, message, error, code}`, docs/errors.md): the HTTP status, the stable
 * snake_case `code`, the message, and any extra members of the body (`operation` of a batch,
 * `action`, …). Failures that never reached the server have status 0 and code
 * `network_error` (or `aborted`).
 */
export class PlinthError extends Error {
  override readonly name: string = 'PlinthError';
  constructor(
    message: string,
    /** The HTTP status (0: no answer). */
    readonly status: number,
    /** The envelope's stable code (docs/errors.md), e.g. `document_not_found`, `refresh_reused`. */
    readonly code: string,
    /** The rest of the error body (e.g. `operation` for a failed batch operation). */
    readonly details: Record<string, unknown> = {},
    /** The server's `x-request-id` for this request (quote it in bug reports). */
    readonly requestId?: string,
    /** Seconds from `Retry-After`, when the server sent one. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/**
 * 412 `precondition_failed`: a write with `ifMatch` found the document changed since that
 * version, and wrote nothing. `etag` is the current version's tag: read the document again,
 * show the difference, and retry with it.
 */
export class PreconditionFailedError extends PlinthError {
  override readonly name = 'PreconditionFailedError';
  /** The document's current ETag. */
  etag?: string;
}

export const isPlinthError = (err: unknown): err is PlinthError => err instanceof PlinthError;

/** The PlinthError of a non-2xx answer, from its (possibly non-JSON) body. */
export function errorOf(res: Response, body: unknown): PlinthError {
  const b = (body && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const { message, error, code, success: _s, data: _d, ...rest } = b;
  const text = typeof message === 'string' ? message : typeof error === 'string' ? error : res.statusText || `HTTP ${res.status}`;
  const retry = Number(res.headers.get('retry-after'));
  const err = new (code === 'precondition_failed' ? PreconditionFailedError : PlinthError)(
    text,
    res.status,
    typeof code === 'string' ? code : `http_${res.status}`,
    rest,
    res.headers.get('x-request-id') ?? undefined,
    Number.isFinite(retry) && retry > 0 ? retry : undefined,
  );
  if (err instanceof PreconditionFailedError) err.etag = res.headers.get('etag') ?? undefined;
  return err;
}
