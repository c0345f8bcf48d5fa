/**
 * Operators' passkeys. Signed in (operator group): registration options and response, list,
 * rename, remove (a fresh second factor in the body: an app code, a recovery code or another
 * passkey's assertion over POST /api/auth/passkeys/signin/options). Public (the assertion is
 * the credential): discoverable sign-in, and options to complete a password sign-in's
 * challenge with a passkey (then POST /api/auth/mfa/verify with `passkey`).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '../../../lib/identity/passkeys.js';
import { StrongProof, WebauthnResponse } from '../../mfa/routes/schemas.js';
import { operatorOf } from '../auth.js';
import { setSessionCookies } from '../cookies.js';
import { limitAuthAttempts } from '../limits.js';
import {
  myOperatorPasskeys, operatorMfaPasskeyOptions, operatorPasskeyRegistrationOptions, operatorPasskeySigninOptions, registerOperatorPasskey,
  removeOperatorPasskey, renameOperatorPasskeyOf, signInOperatorWithPasskey,
} from '../passkeys.js';
import { loadOperator } from '../service.js';
import { proofOf } from './mfa.js';
import { sessionReply } from './reply.js';

const TAGS = ['dashboard: auth'];
const Name = Type.String({ minLength: 1, maxLength: 100 });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** Public: discoverable sign-in and a challenge's passkey options. */
export async function operatorPasskeySigninRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/auth/passkeys/signin/options', {
    schema: { tags: TAGS, summary: "Options for navigator.credentials.get() at the console (discoverable; single use, 5 minutes)" },
    handler: async (req) => {
      await limitAuthAttempts(ctx, req.ip);
      return ok(await operatorPasskeySigninOptions(ctx));
    },
  });

  app.post('/api/auth/passkeys/signin', {
    schema: { tags: TAGS, summary: "Sign in as an operator with a passkey (no email typed): a session at aal2", body: Type.Object({ response: WebauthnResponse }) },
    handler: async (req, reply) => {
      const { operatorId, session } = await signInOperatorWithPasskey(ctx, req.body.response as unknown as AuthenticationResponseJSON);
      return sessionReply(ctx, req, reply, { user: await loadOperator(ctx, operatorId), session }, 'Login successful');
    },
  });

  app.post('/api/auth/mfa/passkey/options', {
    schema: { tags: TAGS, summary: "Options to complete an operator's sign-in challenge with one of their passkeys", body: Type.Object({ challengeId: Type.String({ maxLength: 64 }) }) },
    handler: async (req) => ok(await operatorMfaPasskeyOptions(ctx, req.body.challengeId)),
  });
}

/** The signed-in operator's passkeys. */
export async function operatorPasskeyRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/auth/mfa/passkeys/register/options', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: 'Options for navigator.credentials.create() (single use, 5 minutes); an operator with a factor needs an aal2 session' },
    handler: async (req) => ok(await operatorPasskeyRegistrationOptions(ctx, operatorOf(req))),
  });

  app.post('/api/auth/mfa/passkeys/register', {
    config: { belowAal2: true },
    schema: {
      tags: TAGS,
      summary: "Register the authenticator's response under a name (the first second factor brings recovery codes, shown once, and an aal2 session)",
      body: Type.Object({ name: Type.Optional(Name), response: WebauthnResponse }),
    },
    handler: async (req, reply) => {
      const r = await registerOperatorPasskey(ctx, operatorOf(req), req.body.name, req.body.response as unknown as RegistrationResponseJSON);
      if (r.session) await setSessionCookies(ctx, req, reply, r.session);
      return ok({
        passkey: r.passkey,
        ...(r.recoveryCodes ? { recoveryCodes: r.recoveryCodes } : {}),
        ...(r.session ? { token: r.session.accessToken, accessToken: r.session.accessToken, expiresIn: r.session.expiresIn } : {}),
      }, 'Passkey registered');
    },
  });

  app.get('/api/auth/mfa/passkeys', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: "The operator's passkeys (names, dates, backup state; never a key)" },
    handler: async (req) => ok(await myOperatorPasskeys(ctx, operatorOf(req))),
  });

  app.patch('/api/auth/mfa/passkeys/:id', {
    schema: { tags: TAGS, summary: 'Rename a passkey', params: IdParams, body: Type.Object({ name: Name }) },
    handler: async (req) => {
      await renameOperatorPasskeyOf(ctx, operatorOf(req), req.params.id, req.body.name);
      return done('Passkey renamed');
    },
  });

  app.delete('/api/auth/mfa/passkeys/:id', {
    schema: { tags: TAGS, summary: 'Remove a passkey (needs a fresh second factor, not just a session)', params: IdParams, body: StrongProof },
    handler: async (req) => {
      await removeOperatorPasskey(ctx, operatorOf(req), req.params.id, proofOf(req.body));
      return done('Passkey removed');
    },
  });
}
