/**
 * Email verification by one-time code (docs/wire-compatibility.md §2.8, §2.9). Both endpoints answer the same
 * way whether or not the email is registered (or already verified).
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { done } from '../../../lib/envelope.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { checkEmail, checkOtp, EmailBody } from '../inputs.js';
import { otpLimit } from '../limits.js';
import { consumeCode, requestCode } from '../otp.js';
import { markEmailVerified } from '../queries.js';

export default async function verifyEmailFlow(app: App, ctx: AppContext): Promise<void> {

  app.post('/api/userAuth/verify-email', {
    schema: {
      tags: ['userAuth'],
      summary: 'Verify the email with the 6-digit code (10 min, 5 attempts)',
      body: Type.Object({ email: Type.String({ maxLength: 320 }), otp: Type.String({ maxLength: 32 }) }),
    },
    handler: async (req) => {
      const project = projectOf(req);
      const email = checkEmail(req.body.email);
      const otp = checkOtp(req.body.otp);
      await otpLimit(ctx, project.id, 'verify-check', email);
      await consumeCode(ctx, project, email, 'verify_email', otp, (tx, user) => markEmailVerified(tx, user.id, ctx.clock.now()));
      return done('Email verified successfully');
    },
  });

  app.post('/api/userAuth/resend-verification-otp', {
    schema: {
      tags: ['userAuth'],
      summary: 'Send a new verification code (one per minute per email; same answer for unknown emails)',
      body: EmailBody,
    },
    handler: async (req) => {
      const project = projectOf(req);
      const email = checkEmail(req.body.email);
      await otpLimit(ctx, project.id, 'verify-send', email);
      await requestCode(ctx, project, email, 'verify_email', req.headers['accept-language']);
      return done('If that email needs verification, a code has been sent.');
    },
  });
}
