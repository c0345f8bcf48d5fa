/**
 * The `ETag` of a write's answer (docs/data.md "Conditional writes"): the written document's
 * tag, made of its `_id` and `updatedAt` as the body shows them, so a replayed idempotent answer
 * carries the same tag as the first one. Answers without a document (a delete) carry none.
 */
import type { FastifyReply } from 'fastify';
import type { Answer } from '../../idempotency/service.js';
import { etagOfDocument } from '../etag.js';

/** `body` (an envelope of one document), after setting its document's ETag. */
export function tagged<T extends { data: unknown }>(reply: FastifyReply, body: T): T {
  tagDocument(reply, body.data);
  return body;
}

/** Sets the ETag of `doc`, a document as the API shows it. */
export function tagDocument(reply: FastifyReply, doc: unknown): void {
  const etag = etagOfDocument(doc);
  if (etag) reply.header('etag', etag);
}

/**
 * A stored idempotent answer, after setting the ETag of its document when it is a success:
 * the envelope's `data`, or with `bare` the body itself (a create answers the bare document).
 */
export function taggedAnswer(reply: FastifyReply, answer: Answer, bare = false): Answer {
  if (answer.status >= 200 && answer.status < 300) {
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return answer;
    }
    tagDocument(reply, bare ? body : (body as { data?: unknown } | null)?.data);
  }
  return answer;
}
