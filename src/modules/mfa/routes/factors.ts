/**
 * GET /api/userAuth/mfa/factors (what the user has, never a secret) and POST
 * /api/userAuth/mfa/step-up (a fresh code raises this session to aal2).
 */
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { userClaimsOf } from '../../auth/user-auth.js';
import { myFactors, stepUp } from '../factors.js';
import { proofOf, StrongProof } from './schemas.js';

export default async function factorsFlow(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/userAuth/mfa/factors', {
    config: { belowAal2: true },
    schema: { tags: ['userAuth mfa'], summary: "The user's second factors (app, passkeys, recovery codes left) and this session's aal" },
    handler: async (req) => ok(await myFactors(ctx, projectOf(req), userClaimsOf(req))),
  });

  app.post('/api/userAuth/mfa/step-up', {
    config: { belowAal2: true },
    schema: { tags: ['userAuth mfa'], summary: 'Raise this session to aal2 with a fresh code, a recovery code or a passkey assertion: a new access token', body: StrongProof },
    handler: async (req) => {
      const accessToken = await stepUp(ctx, projectOf(req), userClaimsOf(req), proofOf(req.body));
      return ok({ accessToken, token: accessToken, expiresIn: ctx.config.userAccessTokenTtl.text }, 'Session verified');
    },
  });
}
