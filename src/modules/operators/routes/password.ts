/** Password routes: change (signed in), forgot and reset (by mailed OTP). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { done } from '../../../lib/envelope.js';
import { operatorOf } from '../auth.js';
import type { App } from '../../../app.js';
import { clearSessionCookies } from '../cookies.js';
import { limitOtpChecks, limitOtpSends } from '../limits.js';
import { AnyPassword, Email, MessageEnvelope, NewPassword, OtpCode, SessionEnvelope } from '../schemas.js';
import { changePassword, forgotPassword, resetPassword } from '../service.js';
import { sessionReply } from './reply.js';

const TAGS = ['dashboard: auth'];

/** PUT /api/auth/change-password (operator group). */
export async function changePasswordRoute(app: App, ctx: AppContext): Promise<void> {
  app.put(
    '/api/auth/change-password',
    {
      schema: {
        tags: TAGS,
        summary: 'Change the password; ends every other session (an operator with a second factor needs an aal2 session, which the new one keeps)',
        body: Type.Object({ currentPassword: AnyPassword, newPassword: NewPassword }),
        response: { 200: SessionEnvelope },
      },
    },
    async (req, reply) => {
      const result = await changePassword(ctx, operatorOf(req), req.body.currentPassword, req.body.newPassword);
      return sessionReply(ctx, req, reply, result, 'Password updated successfully');
    },
  );
}

/** Forgot and reset (public: the mailed code is the credential). */
export default async function passwordRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/auth/forgot-password',
    { schema: { tags: TAGS, summary: 'Mail a password reset code (same answer for every email)', body: Type.Object({ email: Email }), response: { 200: MessageEnvelope } } },
    async (req) => {
      await limitOtpSends(ctx, req.body.email);
      await forgotPassword(ctx, req.body.email);
      return done('If this email is registered, an OTP has been sent.');
    },
  );

  app.post(
    '/api/auth/reset-password',
    {
      schema: {
        tags: TAGS,
        summary: 'Set a new password with the mailed code; ends every session',
        body: Type.Object({ email: Email, otp: OtpCode, newPassword: NewPassword }),
        response: { 200: MessageEnvelope },
      },
    },
    async (req, reply) => {
      await limitOtpChecks(ctx, req.body.email);
      await resetPassword(ctx, req.body.email, req.body.otp, req.body.newPassword);
      clearSessionCookies(ctx, reply);
      return done('Password reset successfully. Please log in with your new password.');
    },
  );
}
