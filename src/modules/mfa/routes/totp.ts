/**
 * The signed-in user's authenticator app: POST /api/userAuth/mfa/totp/enroll (secret, otpauth
 * URI, QR code), POST …/totp/confirm (first code → recovery codes, shown once, and an aal2
 * access token), DELETE /api/userAuth/mfa/totp (needs a fresh code or a recovery code).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done, ok } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { userClaimsOf, userIdOf } from '../../auth/user-auth.js';
import { confirmTotp, removeTotp, startTotpEnrolment } from '../totp.js';
import { Code, proofOf, StrongProof } from './schemas.js';

const TAGS = ['userAuth mfa'];

export default async function totpFlow(app: App, ctx: AppContext): Promise<void> {
  app.post('/api/userAuth/mfa/totp/enroll', {
    config: { belowAal2: true },
    schema: { tags: TAGS, summary: 'Start enrolling an authenticator app: the secret, its otpauth:// URI and a QR code (SVG data URL)' },
    handler: async (req) => ok(await startTotpEnrolment(ctx, projectOf(req), userClaimsOf(req)), 'Scan the QR code, then confirm with a code'),
  });

  app.post('/api/userAuth/mfa/totp/confirm', {
    config: { belowAal2: true },
    schema: {
      tags: TAGS,
      summary: 'Confirm the enrolment with a first code: ten recovery codes (shown once) and an aal2 access token',
      body: Type.Object({ code: Code }),
    },
    handler: async (req) => {
      const r = await confirmTotp(ctx, projectOf(req), userClaimsOf(req), req.body.code);
      return ok({ recoveryCodes: r.recoveryCodes, ...(r.accessToken ? { accessToken: r.accessToken, token: r.accessToken } : {}) }, 'Authenticator app enrolled');
    },
  });

  app.delete('/api/userAuth/mfa/totp', {
    schema: { tags: TAGS, summary: 'Remove the authenticator app (needs a fresh code, a recovery code or a passkey assertion, not just a token)', body: StrongProof },
    handler: async (req) => {
      await removeTotp(ctx, projectOf(req), userIdOf(req), proofOf(req.body));
      return done('Authenticator app removed');
    },
  });
}
