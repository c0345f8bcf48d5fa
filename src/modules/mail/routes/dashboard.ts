/**
 * Dashboard mail routes (operator bearer/cookie): logs, live status, the webhook secret of
 * own-key projects, and the dev outbox. Ownership is checked before anything else.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { listLogs, liveStatus } from '../logs.js';
import { outboxMessages, setWebhookSecret } from '../settings-service.js';
import { ownedMailProject, ProjectParams } from './guards.js';

const tags = ['dashboard: mail'];

export default async function dashboardMailRoutes(app: App, ctx: AppContext): Promise<void> {

  app.get(
    '/api/projects/:projectId/mail/logs',
    { schema: { tags, summary: 'The latest 50 mail logs of a project', params: ProjectParams } },
    async (req) => {
      const project = await ownedMailProject(ctx, req, req.params.projectId);
      return ok({ logs: await listLogs(ctx, project.id, 'operator') });
    },
  );

  app.get(
    '/api/projects/:projectId/mail/logs/:providerId/live',
    {
      schema: { tags, summary: "One mail log with the provider's live status", params: Type.Object({ projectId: Type.String(), providerId: Type.String() }) },
    },
    async (req) => {
      const project = await ownedMailProject(ctx, req, req.params.projectId);
      return ok(await liveStatus(ctx, project, req.params.providerId, 'operator'));
    },
  );

  app.put(
    '/api/projects/:projectId/mail/webhook-secret',
    {
      schema: {
        tags,
        summary: "Set (or clear with null) the webhook signing secret of the project's own Resend account",
        params: ProjectParams,
        body: Type.Object({ secret: Type.Union([Type.String(), Type.Null()]) }),
      },
    },
    async (req) => {
      const project = await ownedMailProject(ctx, req, req.params.projectId);
      const has = await setWebhookSecret(ctx, project.id, req.body.secret);
      const webhookUrl = `${ctx.config.publicUrl}/api/mail/webhook?projectId=${project.id}`;
      return ok({ hasWebhookSecret: has, webhookUrl }, has ? 'Webhook secret saved.' : 'Webhook secret cleared.');
    },
  );

  app.get(
    '/api/projects/:projectId/mail/outbox',
    { schema: { tags, summary: 'The dev outbox: the latest 50 messages sent without a provider', params: ProjectParams } },
    async (req) => {
      const project = await ownedMailProject(ctx, req, req.params.projectId);
      return ok({ messages: await outboxMessages(ctx, project.id) });
    },
  );
}
