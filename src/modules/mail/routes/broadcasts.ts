/** Broadcasts (secret key + own Resend key + Pro plan), proxied to Resend. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import type { App } from '../../../app.js';
import * as svc from '../broadcasts.js';

const IdParams = Type.Object({ id: Type.String() });
// Fields are optional in the schema so the gate (403) and the documented 400 text decide (docs/mail.md).
const CreateBody = Type.Object({
  audienceId: Type.Optional(Type.String()),
  subject: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  scheduledAt: Type.Optional(Type.String({ description: 'ISO 8601; schedules the broadcast at once' })),
  from: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});
const SendBody = Type.Union([Type.Object({ scheduledAt: Type.Optional(Type.String()) }), Type.Null()]);
const tags = ['mail: broadcasts'];

export default async function broadcastRoutes(app: App, ctx: AppContext): Promise<void> {

  app.post(
    '/api/mail/broadcasts',
    { schema: { tags, summary: 'Create a broadcast (draft, or scheduled with scheduledAt)', body: CreateBody } },
    async (req) => ok(await svc.createBroadcast(ctx, projectOf(req), req.body), 'Broadcast created.'),
  );
  app.post(
    '/api/mail/broadcasts/:id/send',
    { schema: { tags, summary: 'Send (or schedule) a broadcast', params: IdParams, body: Type.Optional(SendBody) } },
    async (req) => ok(await svc.sendBroadcast(ctx, projectOf(req), req.params.id, req.body?.scheduledAt), 'Broadcast sent.'),
  );
  app.get('/api/mail/broadcasts', { schema: { tags, summary: 'List broadcasts' } }, async (req) =>
    ok(await svc.listBroadcasts(ctx, projectOf(req))),
  );
  app.get('/api/mail/broadcasts/:id', { schema: { tags, summary: 'One broadcast', params: IdParams } }, async (req) =>
    ok(await svc.getBroadcast(ctx, projectOf(req), req.params.id)),
  );
  app.delete(
    '/api/mail/broadcasts/:id',
    { schema: { tags, summary: 'Delete a broadcast', params: IdParams } },
    async (req) => ok(await svc.removeBroadcast(ctx, projectOf(req), req.params.id), 'Broadcast deleted.'),
  );
}
