/**
 * Dashboard authentication: the operator JWT from the `accessToken` cookie or an
 * `Authorization: Bearer` header (scheme matched case-insensitively). Cookie-authenticated
 * mutations must also carry `x-csrf-token` equal to the `csrfToken` cookie (double submit);
 * bearer requests cannot be forged cross-site and need no CSRF token.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { safeEqual } from '../../lib/crypto.js';
import { isAdmin } from './service.js';
import { verifyOperatorToken } from './tokens.js';
import { RequestAuthErrors } from '../../lib/identity/request-errors.js';
import { findOperatorIdentity } from './queries.js';
import type { OperatorIdentity } from './identity.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';

export type { OperatorIdentity } from './identity.js';

declare module 'fastify' {
  interface FastifyRequest {
    operator?: OperatorIdentity;
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function bearerToken(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/** The double-submit check: the `x-csrf-token` header must equal the `csrfToken` cookie. */
export function assertCsrfToken(req: FastifyRequest): void {
  const header = req.headers['x-csrf-token'];
  const cookie = req.cookies?.csrfToken;
  if (typeof header !== 'string' || !cookie || !safeEqual(header, cookie)) {
    throw RequestAuthErrors.csrf_invalid();
  }
}

function checkCsrf(req: FastifyRequest): void {
  if (!SAFE_METHODS.has(req.method)) assertCsrfToken(req);
}

/**
 * Access tokens issued before the account's last password change or reset are dead: the
 * refresh sessions are revoked then, and a token of whoever held the account before must not
 * live on for its last minutes (least of all once a reset has verified the email, which may
 * make the account admin). JWT times are whole seconds.
 */
const issuedBefore = (issuedAt: number, validAfter: Date | null) =>
  validAfter !== null && issuedAt < Math.floor(validAfter.getTime() / 1000);

export function operatorAuth(ctx: AppContext) {
  return async function requireOperator(req: FastifyRequest): Promise<void> {
    const bearer = bearerToken(req);
    const cookie = req.cookies?.accessToken;
    const token = bearer ?? cookie;
    if (!token) throw RequestAuthErrors.no_token();
    const claims = await verifyOperatorToken(ctx.config.dashboardJwtSecret, token, ctx.clock.now());
    if (!claims) throw RequestAuthErrors.invalid_token();
    if (!bearer) checkCsrf(req);
    const row = await findOperatorIdentity(ctx.db.admin, claims.id, claims.sid);
    if (!row || !row.session_live || issuedBefore(claims.issuedAt, row.tokens_valid_after)) throw RequestAuthErrors.invalid_token();
    req.operator = {
      id: row.id,
      email: row.email,
      name: row.name,
      plan: row.plan,
      isVerified: row.is_verified,
      isAdmin: isAdmin(ctx, row),
      aal: claims.aal,
      amr: claims.amr,
      hasSecondFactor: row.has_second_factor,
      sessionId: claims.sid,
      tokenExp: claims.expiresAt,
    };
    // The admin requires a second factor of every operator: only enrolment stays open below aal2.
    if (row.mfa_required && claims.aal !== 'aal2' && req.routeOptions.config?.belowAal2 !== true) {
      throw row.has_second_factor ? MfaErrors.mfa_required() : MfaErrors.mfa_enrollment_required();
    }
  };
}

export function operatorOf(req: FastifyRequest): OperatorIdentity {
  if (!req.operator) throw new Error('route is missing the operator preHandler');
  return req.operator;
}

/**
 * Key rotation, project deletion and export: an operator with a second factor must act from a
 * session verified with it (aal2), so a stolen password-only session cannot.
 */
export function requireAal2IfEnrolled(operator: OperatorIdentity): void {
  if (operator.hasSecondFactor && operator.aal !== 'aal2') throw MfaErrors.mfa_required();
}
