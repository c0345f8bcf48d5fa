/** preHandlers that follow `operatorAuth`: a verified email, or the admin account. */
import type { FastifyRequest } from 'fastify';
import { operatorOf } from './auth.js';
import { OperatorErrors } from './errors.js';
import { IdentityErrors } from '../../lib/identity/errors.js';

export async function requireVerifiedOperator(req: FastifyRequest): Promise<void> {
  if (!operatorOf(req).isVerified) throw IdentityErrors.email_not_verified('Email not verified. Verify your email with the OTP first.');
}

export async function requireAdmin(req: FastifyRequest): Promise<void> {
  if (!operatorOf(req).isAdmin) throw OperatorErrors.admin_only();
}
