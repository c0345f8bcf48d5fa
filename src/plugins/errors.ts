/**
 * One place that turns every failure into the error envelope. Client mistakes (bad JSON,
 * oversized bodies, schema violations, AppErrors) keep their 4xx status; an unreachable
 * database is a 503 with Retry-After; anything else is a 500 whose details go to the log only.
 */
import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { AppError, databaseUnavailable, Errors } from '../lib/errors.js';
import { errorBody } from '../lib/envelope.js';
import { isDatabaseUnavailable, isUnstorableText, sqlState } from '../db/errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the error envelope this request was answered with (the request log reads it). */
    errorCode?: string;
  }
}

function validationMessage(err: FastifyError): string {
  const first = err.validation?.[0];
  if (!first) return err.message;
  const path = (first.instancePath || '').replace(/^\//, '').replace(/\//g, '.');
  const missing = (first.params as { missingProperty?: string })?.missingProperty;
  const field = missing ?? path;
  if (first.keyword === 'required' && missing) return `Field '${missing}' is required.`;
  if (first.keyword === 'additionalProperties') {
    const extra = (first.params as { additionalProperty?: string }).additionalProperty;
    return `Unknown field '${extra}'.`;
  }
  return field ? `Field '${field}' ${first.message}.` : `Request ${err.validationContext ?? 'body'} ${first.message}.`;
}

/** Fastify's own client-error codes, as catalogue errors. */
const FRAMEWORK_ERRORS: Record<string, () => AppError> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => Errors.invalid_json(),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => Errors.invalid_json('Request body cannot be empty when Content-Type is application/json.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => Errors.payload_too_large(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => Errors.unsupported_media_type(),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => Errors.validation_failed('Invalid Content-Length.'),
};

function send(reply: FastifyReply, err: AppError) {
  return reply.status(err.status).headers(err.headers).send(errorBody(err.message, err.code, err.extra));
}

/**
 * `onError` hears the code and status of every error envelope sent (the metrics' error
 * counter: quota refusals, project_busy, rate limits are counted here, in one place).
 */
export function registerErrorHandling(app: FastifyInstance, onError: (code: string, status: number) => void = () => {}): void {
  const sent = (reply: FastifyReply, err: AppError) => {
    reply.request.errorCode = err.code;
    onError(err.code, err.status);
    return send(reply, err);
  };
  app.setErrorHandler((err: FastifyError, req, reply) => {
    // Fastify asks to close the connection after any body-parser error (the rest of the body
    // is unread); closing while the client still sends resets it before it reads the answer.
    // The rest is drained instead, within a bound (src/plugins/body-drain.ts).
    if (reply.getHeader('connection') === 'close') reply.removeHeader('connection');
    if (err instanceof AppError) {
      // A 5xx with Retry-After is a deliberate "come back later" (a backing service is away),
      // logged where it was noticed; any other 5xx is logged here in full.
      if (err.status >= 500 && !err.headers['retry-after']) req.log.error({ err }, 'request failed');
      return sent(reply, err);
    }
    if (err.validation) return sent(reply, Errors.validation_failed(validationMessage(err)));
    const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
    if (known) return sent(reply, known());
    if (err instanceof SyntaxError) return sent(reply, Errors.invalid_json());
    // PostgreSQL refusing text a client sent: bad input, whichever route let it through.
    if (isUnstorableText(err)) return sent(reply, Errors.validation_failed('Text fields may not contain NUL (\\u0000) characters.'));
    // A statement cut off by its timeout (the publishable-key one, a busy server): try later.
    if (sqlState(err) === '57014') return sent(reply, Errors.query_cancelled(undefined, undefined, { headers: { 'retry-after': '1' } }));
    // The database is away (down, restarting, refusing): retry shortly. Logged once per outage
    // by the pool (src/lib/availability.ts), not per request.
    if (isDatabaseUnavailable(err)) return sent(reply, databaseUnavailable());
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      req.errorCode = 'bad_request';
      onError('bad_request', status);
      return reply.status(status).send(errorBody(err.message, 'bad_request'));
    }
    req.log.error({ err }, 'unhandled error');
    return sent(reply, Errors.internal());
  });

  app.setNotFoundHandler((_req, reply) => sent(reply, Errors.not_found()));
}
