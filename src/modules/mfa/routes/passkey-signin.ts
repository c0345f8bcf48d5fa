/**
 * Sign-in with a passkey (the API key only: the assertion is the credential):
 * POST /api/userAuth/passkeys/signin/options then /signin (discoverable, no email typed), and
 * POST /api/userAuth/mfa/passkey/options for a passkey as the second factor of a challenge
 * (completed by POST /api/userAuth/mfa/verify with `passkey`).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import type { AuthenticationResponseJSON } from '../../../lib/identity/passkeys.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { clientMeta, deliverTokens, headerMode } from '../../auth/delivery.js';
import { schemaOf } from '../../auth/schema.js';
import { toUser } from '../../auth/users.js';
import { mfaPasskeyOptions, passkeySigninOptions, signInWithPasskey } from '../passkey-signin.js';
import { WebauthnResponse } from './schemas.js';

const TAGS = ['userAuth passkeys'];

export default async function passkeySigninFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/passkeys/signin/options', {
    schema: { tags: TAGS, summary: 'Options for navigator.credentials.get() (discoverable; the challenge is single use, 5 minutes)' },
    handler: async (req) => ok(await passkeySigninOptions(ctx, projectOf(req))),
  });

  app.post('/api/userAuth/passkeys/signin', {
    schema: {
      tags: TAGS,
      summary: "Sign in with the authenticator's assertion: login's answer, at aal2",
      headers: Type.Object({ 'x-refresh-token-mode': Type.Optional(Type.String()) }),
      body: Type.Object({ response: WebauthnResponse }),
    },
    handler: async (req, reply) => {
      const { user, tokens } = await signInWithPasskey(ctx, projectOf(req), req.body.response as unknown as AuthenticationResponseJSON, clientMeta(req));
      return reply.send(ok({ user: toUser(user, schemaOf(req)), ...deliverTokens(ctx, reply, tokens, headerMode(req)) }, 'Login successful'));
    },
  });

  app.post('/api/userAuth/mfa/passkey/options', {
    schema: { tags: ['userAuth mfa'], summary: "Options to complete an MFA challenge with one of the user's passkeys", body: Type.Object({ challengeId: Type.String({ maxLength: 64 }) }) },
    handler: async (req) => ok(await mfaPasskeyOptions(ctx, projectOf(req), req.body.challengeId)),
  });
}
