/**
 * POST /api/projects/:projectId/realtime/ticket: the dashboard's live records view asks for a
 * ticket as a member of the project, then opens the same stream apps open (GET /api/realtime).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { issueMemberTicket } from '../service.js';
import { Body, Data } from './ticket.js';
import { notAudited } from '../../audit/declare.js';

export default async function operatorTicketRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects/:projectId/realtime/ticket',
    {
      // Served with the public API, outside the audit hooks: it may only be a read.
      config: { audit: notAudited('a ticket to watch the live records: reads only') },
      schema: {
        tags: ['dashboard: realtime'],
        summary: "A realtime ticket as a member of the project (the console's live records)",
        description: 'Reads as the secret key. Open GET /api/realtime?ticket=… with it. See docs/realtime.md.',
        params: Type.Object({ projectId: Type.String() }),
        body: Body,
        response: { 200: Type.Object({ success: Type.Boolean(), data: Data, message: Type.String() }) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await issueMemberTicket(ctx, project.id, operatorOf(req), req.body.subscriptions), 'Realtime ticket issued');
    },
  );
}
