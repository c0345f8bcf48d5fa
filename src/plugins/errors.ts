/**
 * One place that turns every failure into the error envelope. Client mistakes (bad JSON,
 * oversized bodies, schema violations, AppErrors) keep their 4xx status; an unreachable
 * database is a 503 with Retry-After; anything else is a 500 whose details go to the log only.
 *
 * Fastify answers some errors before any route or error handler runs: a path that is not valid
 * percent-encoding and a path parameter over the router's maxParamLength (its
 * `frameworkErrors` option), and HTTP it cannot parse at all (its `clientErrorHandler`, on the
 * socket: malformed request, headers too large, request timeout). `frameworkErrorOptions`
 * routes the first through the same handler and answers the second with the same envelope, so
 * every error a client sees has a catalogue code (docs/errors.md).
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
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
const FRAMEWORK_ERRORS = new Map<string, () => AppError>([
  ['FST_ERR_CTP_INVALID_JSON_BODY', () => Errors.invalid_json()],
  ['FST_ERR_CTP_EMPTY_JSON_BODY', () => Errors.invalid_json('Request body cannot be empty when Content-Type is application/json.')],
  ['FST_ERR_CTP_BODY_TOO_LARGE', () => Errors.payload_too_large()],
  ['FST_ERR_CTP_INVALID_MEDIA_TYPE', () => Errors.unsupported_media_type()],
  ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', () => Errors.validation_failed('Invalid Content-Length.')],
  // Answered by the router, before any route (frameworkErrors): the path is not echoed back.
  ['FST_ERR_BAD_URL', () => Errors.invalid_url()],
  ['FST_ERR_MAX_PARAM_LENGTH', () => Errors.path_parameter_too_long(`A path parameter is longer than ${MAX_PARAM_LENGTH} characters.`)],
]);

/**
 * The longest path parameter the router accepts (Fastify's default is 100): room for every
 * identifier the API issues (a tus upload id is up to 600 characters); a longer one is answered
 * 414 `path_parameter_too_long` before any route runs.
 */
export const MAX_PARAM_LENGTH = 1024;

/** A 4xx outside the catalogue (a library's own error): the common code of that status, else 400 bad_request. */
const BY_STATUS = new Map<number, (message?: string) => AppError>([
  [401, Errors.unauthorized],
  [403, Errors.forbidden],
  [404, Errors.not_found],
  [408, Errors.request_timeout],
  [409, Errors.conflict],
  [413, Errors.payload_too_large],
  [414, Errors.path_parameter_too_long],
  [415, Errors.unsupported_media_type],
  [422, Errors.unprocessable],
  [429, Errors.rate_limited],
  [431, Errors.headers_too_large],
]);
const clientErrorFor = (status: number, message: string): AppError => (BY_STATUS.get(status) ?? Errors.bad_request)(message);

function send(reply: FastifyReply, err: AppError) {
  return reply.status(err.status).headers(err.headers).send(errorBody(err.message, err.code, err.extra));
}

type OnError = (code: string, status: number) => void;

/** The envelope for any error: the error handler's body, also run for the router's errors. */
function answer(err: FastifyError | AppError, req: FastifyRequest, reply: FastifyReply, onError: OnError) {
  const sent = (e: AppError) => {
    req.errorCode = e.code;
    onError(e.code, e.status);
    return send(reply, e);
  };
  // Fastify asks to close the connection after any body-parser error (the rest of the body
  // is unread); closing while the client still sends resets it before it reads the answer.
  // The rest is drained instead, within a bound (src/plugins/body-drain.ts).
  if (reply.getHeader('connection') === 'close') reply.removeHeader('connection');
  if (err instanceof AppError) {
    // A 5xx with Retry-After is a deliberate "come back later" (a backing service is away),
    // logged where it was noticed; any other 5xx is logged here in full.
    if (err.status >= 500 && !err.headers['retry-after']) req.log.error({ err }, 'request failed');
    return sent(err);
  }
  if (err.validation) return sent(Errors.validation_failed(validationMessage(err)));
  const known = err.code ? FRAMEWORK_ERRORS.get(err.code) : undefined;
  if (known) return sent(known());
  if (err instanceof SyntaxError) return sent(Errors.invalid_json());
  // PostgreSQL refusing text a client sent: bad input, whichever route let it through.
  if (isUnstorableText(err)) return sent(Errors.validation_failed('Text fields may not contain NUL (\\u0000) characters.'));
  // A statement cut off by its timeout (the publishable-key one, a busy server): try later.
  if (sqlState(err) === '57014') return sent(Errors.query_cancelled(undefined, undefined, { headers: { 'retry-after': '1' } }));
  // The database is away (down, restarting, refusing): retry shortly. Logged once per outage
  // by the pool (src/lib/availability.ts), not per request.
  if (isDatabaseUnavailable(err)) return sent(databaseUnavailable());
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) return sent(clientErrorFor(status, err.message));
  req.log.error({ err }, 'unhandled error');
  return sent(Errors.internal());
}

/**
 * `onError` hears the code and status of every error envelope sent (the metrics' error
 * counter: quota refusals, project_busy, rate limits are counted here, in one place).
 */
export function registerErrorHandling(app: FastifyInstance, onError: OnError = () => {}): void {
  app.setErrorHandler((err: FastifyError, req, reply) => answer(err, req, reply, onError));
  app.setNotFoundHandler((req, reply) => answer(Errors.not_found(), req, reply, onError));
}

/** What HTTP that Node could not parse is answered with (there is no request: no route, no hooks). */
function connectionErrorFor(code: string | undefined): AppError {
  if (code === 'HPE_HEADER_OVERFLOW') return Errors.headers_too_large();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return Errors.request_timeout();
  return Errors.bad_request('The request is not valid HTTP.');
}

/**
 * Fastify options for the errors it answers itself: the router's (a bad percent-encoding, a
 * path parameter over MAX_PARAM_LENGTH) go through the error handler's `answer`; a connection
 * whose HTTP cannot be parsed gets the envelope written on the socket, then is closed.
 */
export function frameworkErrorOptions(onError: OnError = () => {}): Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler' | 'routerOptions'> {
  return {
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: (err, req, reply) => {
      // No route matched, so no route's hooks run: no CORS grant (src/plugins/cors.ts, as for
      // a 404), and the request id the app-wide onSend hook would have set is set here.
      reply.header('x-request-id', req.id);
      answer(err, req as FastifyRequest, reply as FastifyReply, onError);
    },
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      // A reset connection: nobody to answer (as Fastify's own handler).
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const e = connectionErrorFor(err.code);
      onError(e.code, e.status);
      if (!socket.writable) return void socket.destroy();
      const body = JSON.stringify(errorBody(e.message, e.code));
      const head = `HTTP/1.1 ${e.status} ${http.STATUS_CODES[e.status] ?? 'Error'}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n`;
      socket.end(head + body, () => socket.destroy());
    },
  };
}
