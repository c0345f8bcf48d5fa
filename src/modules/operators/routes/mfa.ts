/**
 * Operators' second factor under /api/auth/mfa: enrol an authenticator app (QR code), confirm
 * (recovery codes shown once, a new aal2 session), remove or regenerate codes (a fresh code in
 * the request), and complete a password sign-in's challenge (public: the challenge is the
 * credential).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import type { AuthenticationResponseJSON } from '../../../lib/identity/passkeys.js';
import { Code, RecoveryCode, StrongProof as Proof, WebauthnResponse } from '../../mfa/routes/schemas.js';
import { operatorOf } from '../auth.js';
import { setSessionCookies } from '../cookies.js';
import { completeOperatorChallenge, confirmOperatorTotp, operatorFactors, regenerateOperatorCodes, removeOperatorTotp, startOperatorEnrolment, type OperatorProof } from '../mfa.js';
import { loadOperator } from '../service.js';
import { sessionReply } from './reply.js';

const TAGS = ['dashboard: auth'];

/** The proof as the check takes it (the assertion's JSON is checked by the ceremony). */
export const proofOf = (body: { code?: string; recoveryCode?: string; passkey?: unknown } | undefined): OperatorProof =>
  ({ code: body?.code, recoveryCode: body?.recoveryCode, passkey: body?.passkey as AuthenticationResponseJSON | undefined });

/** Public: POST /api/auth/mfa/verify. */
export async function operatorMfaVerifyRoute(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/auth/mfa/verify', {
    schema: {
      tags: TAGS,
      summary: "Complete an operator's sign-in with the second factor: a session at aal2",
      body: Type.Object(
        { challengeId: Type.String({ maxLength: 64 }), code: Type.Optional(Code), recoveryCode: Type.Optional(RecoveryCode), passkey: Type.Optional(WebauthnResponse) },
        { additionalProperties: false },
      ),
    },
    handler: async (req, reply) => {
      const { operatorId, session } = await completeOperatorChallenge(ctx, req.body.challengeId, proofOf(req.body));
      return sessionReply(ctx, req, reply, { user: await loadOperator(ctx, operatorId), session }, 'Login successful');
    },
  });
}

/** The signed-in operator's own factor. */
export async function operatorMfaRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get('/api/auth/mfa/factors', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: "The operator's second factor, recovery codes left, this session's aal, and whether the admin requires one" },
    handler: async (req) => ok(await operatorFactors(ctx, operatorOf(req))),
  });

  app.post('/api/auth/mfa/totp/enroll', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: 'Start enrolling an authenticator app: secret, otpauth:// URI, QR code (SVG data URL)' },
    handler: async (req) => ok(await startOperatorEnrolment(ctx, operatorOf(req)), 'Scan the QR code, then confirm with a code'),
  });

  app.post('/api/auth/mfa/totp/confirm', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: 'Confirm with a first code: ten recovery codes (shown once) and a new aal2 session', body: Type.Object({ code: Code }) },
    handler: async (req, reply) => {
      const r = await confirmOperatorTotp(ctx, operatorOf(req), req.body.code);
      await setSessionCookies(ctx, req, reply, r.session);
      return ok({ recoveryCodes: r.recoveryCodes, token: r.session.accessToken, accessToken: r.session.accessToken, expiresIn: r.session.expiresIn }, 'Authenticator app enrolled');
    },
  });

  app.delete('/api/auth/mfa/totp', {
    schema: { tags: TAGS, summary: 'Remove the authenticator app (needs a fresh code, a recovery code or a passkey assertion)', body: Proof },
    handler: async (req) => {
      await removeOperatorTotp(ctx, operatorOf(req), proofOf(req.body));
      return done('Authenticator app removed');
    },
  });

  app.post('/api/auth/mfa/recovery-codes', {
    schema: { tags: TAGS, summary: 'Regenerate the recovery codes (needs a fresh code, a recovery code or a passkey assertion); the old set stops working', body: Proof },
    handler: async (req) => ok({ recoveryCodes: await regenerateOperatorCodes(ctx, operatorOf(req), proofOf(req.body)) }, 'Recovery codes regenerated'),
  });
}
