/** GET /api/mail/logs and GET /api/mail/logs/:providerId (secret key). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import { listLogs, liveStatus } from '../logs.js';

export default async function logRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/mail/logs',
    { schema: { tags: ['mail'], summary: 'The latest 50 mail logs, newest first (by sentAt)' } },
    async (req) => ok({ logs: await listLogs(ctx, projectOf(req).id, 'secret') }),
  );

  app.get(
    '/api/mail/logs/:providerId',
    {
      schema: {
        tags: ['mail'],
        summary: "One mail log with the provider's live status",
        params: Type.Object({ providerId: Type.String({ description: 'Provider email id (UUID)' }) }),
      },
    },
    async (req) => ok(await liveStatus(ctx, projectOf(req), req.params.providerId, 'secret')),
  );
}
