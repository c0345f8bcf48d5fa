/** POST /api/mail/send-batch: 1–100 independent messages, straight to the provider. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { IdempotencyHeaders, keyedRequest, sendAnswer } from '../../idempotency/http.js';
import { MAX_BATCH, sendBatch, sendBatchOnce, type BatchItem } from '../batch.js';
import type { BatchItemResult } from '../providers/types.js';
import { MAX_RECIPIENTS } from '../content.js';
import { MailErrors } from '../errors.js';

const BatchBody = Type.Array(
  Type.Object({
    to: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: MAX_RECIPIENTS })]),
    subject: Type.String(),
    html: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
  }),
  { minItems: 1, maxItems: MAX_BATCH },
);

export default async function sendBatchRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/mail/send-batch',
    {
      attachValidation: true,
      schema: {
        tags: ['mail'],
        summary: 'Send 1–100 independent emails directly (one quota slot each, refunded on failure)',
        headers: IdempotencyHeaders,
        body: BatchBody,
      },
    },
    async (req, reply) => {
      if (req.validationError) throw MailErrors.mail_invalid_batch();
      const respond = (results: BatchItemResult[]) => {
        const accepted = results.filter((r) => 'id' in r).length;
        return { status: 200, body: ok(results, `${accepted} of ${results.length} emails accepted.`) };
      };
      const keyed = keyedRequest(req, null);
      if (keyed) return sendAnswer(reply, await sendBatchOnce(ctx, projectOf(req), req.body as BatchItem[], keyed, respond));
      return respond(await sendBatch(ctx, projectOf(req), req.body as BatchItem[])).body;
    },
  );
}
