/**
 * One place that turns every failure into the error envelope. Client mistakes (bad JSON,
 * oversized bodies, schema violations, AppErrors) keep their 4xx status; anything else is a
 * 500 whose details go to the log only.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError } from '../lib/errors.js';
import { errorBody } from '../lib/envelope.js';

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

/** Fastify's own client-error codes and the status + stable code we answer with. */
const FRAMEWORK_ERRORS: Record<string, [number, string, string?]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: [400, 'invalid_json'],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'invalid_json', 'Request body cannot be empty when Content-Type is application/json.'],
  FST_ERR_CTP_BODY_TOO_LARGE: [413, 'payload_too_large', 'Request body is too large.'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, 'unsupported_media_type', 'Unsupported Content-Type.'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, 'validation_failed', 'Invalid Content-Length.'],
};

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req, reply) => {
    if (err instanceof AppError) {
      if (err.status >= 500) req.log.error({ err }, 'request failed');
      return reply.status(err.status).headers(err.headers).send(errorBody(err.message, err.code, err.extra));
    }
    if (err.validation) {
      return reply.status(400).send(errorBody(validationMessage(err), 'validation_failed'));
    }
    const known = err.code ? FRAMEWORK_ERRORS[err.code] : undefined;
    if (known) {
      const [status, code, message] = known;
      const text = code === 'invalid_json'
        ? message ?? 'Check your request body syntax. Stray characters outside the JSON object are not allowed.'
        : message!;
      return reply.status(status).send(errorBody(text, code));
    }
    if (err instanceof SyntaxError) {
      return reply.status(400).send(errorBody('Check your request body syntax. Stray characters outside the JSON object are not allowed.', 'invalid_json'));
    }
    const status = err.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.status(status).send(errorBody(err.message, 'bad_request'));
    req.log.error({ err }, 'unhandled error');
    return reply.status(500).send(errorBody('Internal server error.', 'internal'));
  });

  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(errorBody('Not Found', 'not_found'));
  });
}
