/**
 * Password reset by one-time code (docs/wire-compatibility.md §2.10, §2.11). The request never reveals whether
 * the email exists; a successful reset revokes every session of the user.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { checkEmail, checkNewPassword, checkOtp, EmailBody } from '../inputs.js';
import { otpLimit } from '../limits.js';
import { consumeCode, requestCode } from '../otp.js';
import { hashPassword } from '../../../lib/passwords.js';
import { markEmailVerified, setPasswordHash } from '../queries.js';
import { revokeUserSessions } from '../session-queries.js';

export default async function passwordResetFlow(app: App, ctx: AppContext): Promise<void> {

  app.post('/api/userAuth/request-password-reset', {
    schema: {
      tags: ['userAuth'],
      summary: 'Mail a password-reset code if the email is registered (always the same answer)',
      body: EmailBody,
    },
    handler: async (req) => {
      const project = projectOf(req);
      const email = checkEmail(req.body.email);
      await otpLimit(ctx, project.id, 'reset-send', email);
      await requestCode(ctx, project, email, 'reset_password', req.headers['accept-language']);
      return done('If that email exists, a reset code has been sent.');
    },
  });

  app.post('/api/userAuth/reset-password', {
    schema: {
      tags: ['userAuth'],
      summary: 'Set a new password with the reset code; revokes all sessions',
      body: Type.Object({
        email: Type.String({ maxLength: 320 }),
        otp: Type.String({ maxLength: 32 }),
        newPassword: Type.String(),
      }),
    },
    handler: async (req) => {
      const project = projectOf(req);
      const email = checkEmail(req.body.email);
      const otp = checkOtp(req.body.otp);
      const password = checkNewPassword(req.body.newPassword);
      await otpLimit(ctx, project.id, 'reset-check', email);
      const hash = await hashPassword(password);
      await consumeCode(ctx, project, email, 'reset_password', otp, async (tx, user) => {
        const now = ctx.clock.now();
        await setPasswordHash(tx, user.id, hash, now);
        await markEmailVerified(tx, user.id, now);
        await revokeUserSessions(tx, user.id, now);
      });
      return done('Password updated successfully');
    },
  });
}
