/** What second factors a user has, and step-up of the current session with a code. No secret ever leaves. */
import type { AppContext } from '../../context.js';
import { withSecondFactor } from '../../lib/identity/assurance.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { accessTokenFor } from '../auth/sessions.js';
import { raiseSessionAssurance } from '../auth/session-queries.js';
import type { UserTokenClaims } from '../auth/tokens.js';
import type { Tx } from '../../db/pool.js';
import { listPasskeys, USER_PASSKEYS } from '../../lib/identity/passkey-queries.js';
import type { ProjectRecord } from '../projects/cache.js';
import { countRecoveryCodesLeft, findTotp } from './queries.js';
import { checkSecondFactor, userScope, type SecondFactorProof } from './second-factor.js';

/** The factors of a user as the user and the project's operator see them. */
export async function factorsOf(db: Tx, userId: string) {
  const totp = await findTotp(db, userId);
  const passkeys = await listPasskeys(db, USER_PASSKEYS, userId);
  return {
    totp: totp ? { confirmed: totp.verified_at !== null, createdAt: totp.created_at } : null,
    passkeys: passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.created_at, lastUsedAt: p.last_used_at, backedUp: p.backed_up })),
    recoveryCodesLeft: await countRecoveryCodesLeft(db, userId),
  };
}

export async function myFactors(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims) {
  const factors = await ctx.db.read(userScope(project, caller.userId), (db) => factorsOf(db, caller.userId));
  return { ...factors, aal: caller.aal };
}

/** Raises this session to aal2 with a fresh code: a new access token (the refresh token keeps working, now at aal2). */
export async function stepUp(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, proof: SecondFactorProof): Promise<string> {
  if (!caller.sid) throw MfaErrors.mfa_required('This token has no session to step up: sign in again.');
  const method = await checkSecondFactor(ctx, project, caller.userId, proof);
  const now = ctx.clock.now();
  const assurance = withSecondFactor(caller.amr, method, now);
  const raised = await ctx.db.read(userScope(project, caller.userId), (db) => raiseSessionAssurance(db, caller.sid!, caller.userId, assurance.aal, assurance.amr, now));
  if (!raised) throw MfaErrors.mfa_required('This session has ended: sign in again.');
  return accessTokenFor(ctx, project, caller.userId, { sid: caller.sid, ...assurance, anonymous: caller.isAnonymous });
}
