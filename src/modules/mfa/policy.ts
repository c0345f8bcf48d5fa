/**
 * A project's second-factor policy (`settings.mfa.policy`): `offer` (the default: users may
 * enrol, nothing else changes) or `require` (every end user must sign in with a second
 * factor). Under `require`, a user token below aal2 is refused on every end-user route but
 * the enrolment ones: 403 `mfa_enrollment_required` while the user has no factor (the app
 * sends them to enrolment), 403 `mfa_required` once they have one (sign in again, or step up).
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import type { UserTokenClaims } from '../auth/tokens.js';
import type { ProjectRecord } from '../projects/cache.js';
import { factorSummary } from './queries.js';
import { userScope } from './second-factor.js';

export type MfaPolicy = 'offer' | 'require';
export const MFA_POLICIES: readonly MfaPolicy[] = ['offer', 'require'];

export function mfaPolicyOf(project: ProjectRecord): MfaPolicy {
  const mfa = project.settings.mfa as { policy?: unknown } | undefined;
  return mfa?.policy === 'require' ? 'require' : 'offer';
}

/** Throws when the project requires a second factor and this token's session has none (routes marked `belowAal2` excepted). */
export async function assertAssurance(ctx: AppContext, req: FastifyRequest, project: ProjectRecord, claims: UserTokenClaims): Promise<void> {
  if (req.routeOptions.config?.belowAal2 === true) return;
  await assertProjectAssurance(ctx, project, claims);
}

/** The same check outside a route (realtime tickets). */
export async function assertProjectAssurance(ctx: AppContext, project: ProjectRecord, claims: UserTokenClaims): Promise<void> {
  if (claims.aal === 'aal2' || mfaPolicyOf(project) !== 'require') return;
  const f = await ctx.db.read(userScope(project, claims.userId), (db) => factorSummary(db, claims.userId));
  throw f.totp || f.passkeys > 0 ? MfaErrors.mfa_required() : MfaErrors.mfa_enrollment_required();
}

/**
 * Account changes a stolen session must not make (the password): when the user has a second
 * factor, under either policy, the token must be aal2 (403 `mfa_required`; the app steps up
 * with POST /api/userAuth/mfa/step-up and retries). Users without a factor are not affected.
 */
export async function assertAal2IfEnrolled(ctx: AppContext, project: ProjectRecord, claims: UserTokenClaims): Promise<void> {
  if (claims.aal === 'aal2') return;
  const f = await ctx.db.read(userScope(project, claims.userId), (db) => factorSummary(db, claims.userId));
  if (f.totp || f.passkeys > 0) throw MfaErrors.mfa_required('Changing the password needs a session verified with your second factor (aal2): step up first.');
}

/** What a session at aal1 is told at sign-in under `require` (an additive field; nothing otherwise). */
export function enrolmentDue(project: ProjectRecord): { mfaEnrollmentRequired?: true } {
  return mfaPolicyOf(project) === 'require' ? { mfaEnrollmentRequired: true } : {};
}
