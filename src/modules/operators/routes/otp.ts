/** Email verification by OTP (only asked for when a real mail provider is configured). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { done } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { limitOtpChecks, limitOtpSends } from '../limits.js';
import { ChallengeEnvelope, Email, MessageEnvelope, OtpCode, SessionEnvelope } from '../schemas.js';
import { ok } from '../../../lib/envelope.js';
import { sendVerificationOtp, verifyEmail } from '../service.js';
import { sessionReply } from './reply.js';

const TAGS = ['dashboard: auth'];

export default async function otpRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/auth/send-otp',
    { schema: { tags: TAGS, summary: 'Mail an email-verification code', body: Type.Object({ email: Email }), response: { 200: MessageEnvelope } } },
    async (req) => {
      await limitOtpSends(ctx, req.body.email);
      await sendVerificationOtp(ctx, req.body.email);
      // The same answer for unknown and already verified accounts: no account discovery here.
      return done('If this account needs verification, an OTP has been sent.');
    },
  );

  app.post(
    '/api/auth/verify-otp',
    {
      schema: { tags: TAGS, summary: 'Verify the email with the code; signs in (or answers the second-factor challenge, as login)',
        body: Type.Object({ email: Email, otp: OtpCode }),
        response: { 200: Type.Union([SessionEnvelope, ChallengeEnvelope]) },
      },
    },
    async (req, reply) => {
      await limitOtpChecks(ctx, req.body.email);
      const outcome = await verifyEmail(ctx, req.body.email, req.body.otp);
      // A second factor is due: no session, no cookies; POST /api/auth/mfa/verify completes it.
      if ('challenge' in outcome) return ok({ mfaRequired: true as const, ...outcome.challenge }, 'Email verified; second factor required');
      return sessionReply(ctx, req, reply, outcome, 'Email verified successfully');
    },
  );
}
