/**
 * The signed-in user's passkeys: registration options and response, list, rename, remove
 * (removal needs a fresh second factor: an app code, a recovery code or another passkey's
 * assertion over POST /api/userAuth/passkeys/signin/options).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '../../../lib/identity/passkeys.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { userClaimsOf, userIdOf } from '../../auth/user-auth.js';
import { myPasskeys, passkeyRegistrationOptions, registerPasskey, removeMyPasskey, renameMyPasskey } from '../passkeys.js';
import { StrongProof, WebauthnResponse } from './schemas.js';

const TAGS = ['userAuth passkeys'];
const Name = Type.String({ minLength: 1, maxLength: 100 });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export default async function passkeysFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/passkeys/register/options', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: 'Options for navigator.credentials.create() (the challenge is single use, 5 minutes)' },
    handler: async (req) => ok(await passkeyRegistrationOptions(ctx, projectOf(req), userClaimsOf(req))),
  });

  app.post('/api/userAuth/passkeys/register', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: "Register the authenticator's response under a name (the first factor brings recovery codes, shown once)", body: Type.Object({ name: Name, response: WebauthnResponse }) },
    handler: async (req) => ok(await registerPasskey(ctx, projectOf(req), userClaimsOf(req), req.body.name, req.body.response as unknown as RegistrationResponseJSON), 'Passkey registered'),
  });

  app.get('/api/userAuth/passkeys', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: "The user's passkeys (names, dates, backup state)" },
    handler: async (req) => ok(await myPasskeys(ctx, projectOf(req), userIdOf(req))),
  });

  app.patch('/api/userAuth/passkeys/:id', {
    schema: { tags: TAGS, summary: 'Rename a passkey', params: IdParams, body: Type.Object({ name: Name }) },
    handler: async (req) => {
      await renameMyPasskey(ctx, projectOf(req), userIdOf(req), req.params.id, req.body.name);
      return done('Passkey renamed');
    },
  });

  app.delete('/api/userAuth/passkeys/:id', {
    schema: { tags: TAGS, summary: 'Remove a passkey (needs a fresh second factor, not just a token)', params: IdParams, body: StrongProof },
    handler: async (req) => {
      const { code, recoveryCode, passkey } = req.body ?? {};
      await removeMyPasskey(ctx, projectOf(req), userIdOf(req), req.params.id, { code, recoveryCode, passkey: passkey as unknown as AuthenticationResponseJSON | undefined });
      return done('Passkey removed');
    },
  });
}
