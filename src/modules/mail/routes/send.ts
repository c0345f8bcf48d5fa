/** POST /api/mail/send: queue one message (secret key only). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { MAX_RECIPIENTS } from '../content.js';
import { IdempotencyHeaders, keyedRequest, sendAnswer } from '../../idempotency/http.js';
import { queuedResponse, sendMail, sendMailOnce } from '../send.js';

export const SendBody = Type.Object({
  to: Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1, maxItems: MAX_RECIPIENTS })], {
    description: 'One address, or up to 50',
  }),
  subject: Type.Optional(Type.String({ description: 'Direct mode: required (1–200 characters)' })),
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  templateId: Type.Optional(Type.String({ description: 'Template mode: 24-hex template id' })),
  templateName: Type.Optional(Type.String({ description: 'Template mode: template key or name' })),
  variables: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

const SendData = Type.Object({
  id: Type.String({ description: 'Queue job id' }),
  provider: Type.Union([Type.Literal('byok'), Type.Literal('default')]),
  monthlyUsage: Type.Number(),
  monthlyLimit: Type.Number(),
  templateUsed: Type.Optional(Type.Object({ id: Type.String(), scope: Type.String(), key: Type.String(), name: Type.String() })),
});

export default async function sendRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/mail/send',
    {
      schema: {
        tags: ['mail'],
        summary: 'Queue one email (direct or template mode); reserves a monthly quota slot',
        headers: IdempotencyHeaders,
        body: SendBody,
        response: { 200: Type.Object({ success: Type.Boolean(), data: SendData, message: Type.String() }) },
      },
    },
    async (req, reply) => {
      const keyed = keyedRequest(req, null);
      if (keyed) return sendAnswer(reply, await sendMailOnce(ctx, projectOf(req), req.body, keyed, queuedResponse));
      return queuedResponse(await sendMail(ctx, projectOf(req), req.body)).body;
    },
  );
}
