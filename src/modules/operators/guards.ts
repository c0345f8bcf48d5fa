/** preHandlers that follow `operatorAuth`: a verified email, or the admin account. */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { operatorOf } from './auth.js';
import { OperatorErrors } from './errors.js';
import { isAdminEmail } from './service.js';
import { IdentityErrors } from '../../lib/identity/errors.js';

export async function requireVerifiedOperator(req: FastifyRequest): Promise<void> {
  if (!operatorOf(req).isVerified) throw IdentityErrors.email_not_verified('Email not verified. Verify your email with the OTP first.');
}

/**
 * The admin account only. The ADMIN_EMAIL account is admin once its email is verified (when
 * verification is on, service.ts `isAdmin`); until then it is told so, with its own code, rather
 * than "admin only", which would leave the admin guessing why ADMIN_EMAIL does not work.
 */
export function requireAdmin(ctx: AppContext) {
  return async function requireAdmin(req: FastifyRequest): Promise<void> {
    const operator = operatorOf(req);
    if (operator.isAdmin) return;
    if (isAdminEmail(ctx, operator.email)) throw OperatorErrors.admin_email_not_verified();
    throw OperatorErrors.admin_only();
  };
}
