/**
 * The `Idempotency-Key` header on the routes that accept it: its schema (for /docs), reading it
 * into a KeyedRequest, and sending an Answer. A request without the header costs nothing more
 * than reading one header: no query, no transaction.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { JSON_CONTENT_TYPE } from '../../lib/envelope.js';
import { IdempotencyErrors } from './errors.js';
import { fingerprintOf, type Answer, type KeyedRequest } from './service.js';

export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Optional, 1–255 printable ASCII characters, unique per write (a UUID). A retry with the same key and request within ' +
        '24 h answers the first answer again (`Idempotent-Replayed: true`) without writing again; the same key with a different ' +
        'request answers 409 `idempotency_key_reused`; while the first request still runs, 409 `idempotency_key_in_use` ' +
        '(send-batch: for at most 2 minutes, after which a request that never finished is taken over by the next retry).',
    }),
  ),
});

/** 1–255 characters from space to tilde. */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/**
 * The request's key and fingerprint, or null without the header. `userId` is the end user the
 * write runs as (publishable key), part of the fingerprint with the key kind.
 */
export function keyedRequest(req: FastifyRequest, userId: string | null | undefined): KeyedRequest | null {
  const key = req.headers['idempotency-key'];
  if (key === undefined) return null;
  if (typeof key !== 'string' || !VALID_KEY.test(key)) throw IdempotencyErrors.idempotency_key_invalid();
  const fingerprint = fingerprintOf({
    method: req.method,
    route: req.routeOptions.url ?? '',
    params: req.params ?? {},
    query: req.query ?? {},
    keyKind: req.keyKind ?? null,
    userId: userId ?? null,
    body: req.body ?? null,
    // A condition on the write (docs/data.md "Conditional writes") is part of what was asked;
    // only when sent, so the fingerprints of requests without one stay as they were.
    ...(req.headers['if-match'] !== undefined && { ifMatch: req.headers['if-match'] }),
  });
  return { key, fingerprint };
}

/**
 * The same KeyedRequest for a call made without HTTP (a function's `plinth.mail.send` with an
 * idempotency key): the route it stands for, as the secret key with no end user, so it shares
 * the key space of that route's own requests.
 */
export function keyedCall(key: unknown, method: string, route: string, body: unknown): KeyedRequest {
  if (typeof key !== 'string' || !VALID_KEY.test(key)) throw IdempotencyErrors.idempotency_key_invalid();
  return { key, fingerprint: fingerprintOf({ method, route, params: {}, query: {}, keyKind: 'secret', userId: null, body }) };
}

export function sendAnswer(reply: FastifyReply, answer: Answer): FastifyReply {
  if (answer.replayed) reply.header('idempotent-replayed', 'true');
  return reply.status(answer.status).type(JSON_CONTENT_TYPE).send(answer.body);
}
