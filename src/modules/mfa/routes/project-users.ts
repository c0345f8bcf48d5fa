/**
 * Dashboard: a project user's second factors. GET lists them (no secret), DELETE resets them
 * (audited in the log). The operator must own the project (404 otherwise).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { resetUserFactors, userFactors } from '../admin.js';

const Params = Type.Object({ projectId: Type.String(), userId: Type.String() });
const TAGS = ['project users'];

export default async function projectUserFactorsRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/projects/:projectId/users/:userId/factors', {
    schema: { tags: TAGS, summary: "A user's second factors: authenticator app, passkeys, recovery codes left (never a secret)", params: Params },
    handler: async (req) => ok(await userFactors(ctx, operatorOf(req), req.params.projectId, req.params.userId)),
  });

  app.delete('/api/projects/:projectId/users/:userId/factors', {
    schema: { tags: TAGS, summary: "Reset a user's second factors (app, passkeys, recovery codes); audited", params: Params },
    handler: async (req) => {
      await resetUserFactors(ctx, operatorOf(req), req.params.projectId, req.params.userId);
      return done('Second factors reset');
    },
  });
}
