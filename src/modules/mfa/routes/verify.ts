/**
 * POST /api/userAuth/mfa/verify: completes the MFA challenge a password or social sign-in
 * left, with a code of the authenticator app, a recovery code or a passkey assertion. The answer is login's
 * (user, tokens in the usual places), at aal2. 5 tries per challenge, 10 per account per
 * 15 minutes.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { clientMeta, deliverTokens, headerMode } from '../../auth/delivery.js';
import { schemaOf } from '../../auth/schema.js';
import { currentUser } from '../../auth/service.js';
import { toUser } from '../../auth/users.js';
import { completeWithCode } from '../challenge.js';
import { Code, RecoveryCode, WebauthnResponse } from './schemas.js';
import { completeWithPasskey } from '../passkey-signin.js';
import type { AuthenticationResponseJSON } from '../../../lib/identity/passkeys.js';

const Body = Type.Object(
  { challengeId: Type.String({ maxLength: 64 }), code: Type.Optional(Code), recoveryCode: Type.Optional(RecoveryCode), passkey: Type.Optional(WebauthnResponse) },
  { additionalProperties: false },
);

export default async function verifyFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/mfa/verify', {
    schema: {
      tags: ['userAuth mfa'],
      summary: 'Complete a sign-in with the second factor: the challenge and a code (or a recovery code) → tokens at aal2',
      headers: Type.Object({ 'x-refresh-token-mode': Type.Optional(Type.String()) }),
      body: Body,
    },
    handler: async (req, reply) => {
      const project = projectOf(req);
      const { challengeId, code, recoveryCode, passkey } = req.body;
      const { userId, tokens } = passkey && !code && !recoveryCode
        ? await completeWithPasskey(ctx, project, challengeId, passkey as unknown as AuthenticationResponseJSON, clientMeta(req))
        : await completeWithCode(ctx, project, challengeId, { code, recoveryCode }, clientMeta(req));
      const user = await currentUser(ctx, project, userId);
      return reply.send(ok({ user: toUser(user, schemaOf(req)), ...deliverTokens(ctx, reply, tokens, headerMode(req)) }, 'Login successful'));
    },
  });
}
