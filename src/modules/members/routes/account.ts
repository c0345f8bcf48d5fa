/** DELETE /api/auth/me: an operator deletes their own account (docs/teams.md). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import { AnyPassword, envelopeOf } from '../../operators/schemas.js';
import { clearSessionCookies } from '../../operators/cookies.js';
import { deleteOwnAccount } from '../service.js';

export default async function accountRoutes(app: App, ctx: AppContext): Promise<void> {
  app.delete(
    '/api/auth/me',
    {
      schema: {
        tags: ['dashboard: auth'],
        summary: 'Delete your own account (refused while you own projects); your sessions end',
        body: Type.Object({ password: AnyPassword }),
        response: { 200: envelopeOf(Type.Object({ message: Type.String() })) },
      },
    },
    async (req, reply) => {
      await deleteOwnAccount(ctx, operatorOf(req), req.body.password, req.ip ?? null);
      clearSessionCookies(ctx, reply);
      return ok({ message: 'Account deleted' }, 'Account deleted');
    },
  );
}
