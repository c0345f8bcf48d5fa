/**
 * Authenticator-app (TOTP) enrolment of an end user: start (a fresh secret, encrypted at rest,
 * shown as an otpauth:// URI and a QR code), confirm with a first code (the factor is used from
 * then on, ten recovery codes are issued and shown once, and the current session becomes aal2),
 * and removal, which needs a fresh second factor in the request: an access token alone, even a
 * stolen aal2 one, cannot switch the factor off.
 */
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { withSecondFactor } from '../../lib/identity/assurance.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { newRecoveryCodes } from '../../lib/identity/recovery-codes.js';
import { newTotpSecret, totpQrDataUrl, totpUri } from '../../lib/identity/totp.js';
import { accessTokenFor } from '../auth/sessions.js';
import { lowerUserSessions, raiseSessionAssurance } from '../auth/session-queries.js';
import { findUserById } from '../auth/queries.js';
import type { UserTokenClaims } from '../auth/tokens.js';
import type { ProjectRecord } from '../projects/cache.js';
import { deleteTotp, factorSummary, findTotp, replaceRecoveryCodes, upsertPendingTotp } from './queries.js';
import { checkSecondFactor, userScope, type SecondFactorProof } from './second-factor.js';

export interface TotpEnrolment {
  secret: string;
  otpauthUri: string;
  qrCode: string;
}

/**
 * Starts an enrolment (a restart replaces an unconfirmed secret). 409 when an app is already
 * enrolled; 403 `mfa_required` when the user has another second factor and this session was
 * not verified with one (a stolen aal1 token must not add a factor).
 */
export async function startTotpEnrolment(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims): Promise<TotpEnrolment> {
  const { userId } = caller;
  const secret = newTotpSecret();
  const email = await ctx.db.tenant(userScope(project, userId), async (tx) => {
    const factors = await factorSummary(tx, userId);
    if (factors.totp) throw MfaErrors.mfa_already_enrolled();
    if (factors.passkeys > 0 && caller.aal !== 'aal2') throw MfaErrors.mfa_required();
    const user = await findUserById(tx, userId);
    if (!user || !(await upsertPendingTotp(tx, userId, project.id, encrypt(ctx.config.encryptionKey, secret), ctx.clock.now()))) {
      throw MfaErrors.mfa_already_enrolled();
    }
    return user.email ?? `guest-${userId.slice(-8)}`;
  });
  const otpauthUri = totpUri(secret, project.name, email);
  return { secret, otpauthUri, qrCode: await totpQrDataUrl(otpauthUri) };
}

/** Confirms the enrolment with its first code: recovery codes (shown once) and an aal2 access token for this session. */
export async function confirmTotp(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, code: string) {
  const { userId } = caller;
  const pending = await ctx.db.read(userScope(project, userId), (db) => findTotp(db, userId));
  if (!pending || pending.verified_at !== null) throw MfaErrors.mfa_not_enrolled();
  await checkSecondFactor(ctx, project, userId, { code }, { confirm: true });
  const now = ctx.clock.now();
  const { codes, hashes } = newRecoveryCodes(ctx.config.encryptionKey, 'app-user', userId);
  const assurance = withSecondFactor(caller.amr, 'totp', now);
  await ctx.db.tenant(userScope(project, userId), async (tx) => {
    await replaceRecoveryCodes(tx, userId, project.id, hashes, now);
    if (caller.sid) await raiseSessionAssurance(tx, caller.sid, userId, assurance.aal, assurance.amr, now);
  });
  const accessToken = caller.sid ? await accessTokenFor(ctx, project, userId, { sid: caller.sid, ...assurance, anonymous: caller.isAnonymous }) : null;
  return { recoveryCodes: codes, accessToken };
}

/**
 * Removes the authenticator app after a fresh code (or a recovery code) in the same request.
 * Without another second factor the recovery codes go too, and every session of the user
 * falls back to aal1.
 */
export async function removeTotp(ctx: AppContext, project: ProjectRecord, userId: string, proof: SecondFactorProof): Promise<void> {
  const existing = await ctx.db.read(userScope(project, userId), (db) => findTotp(db, userId));
  if (!existing || existing.verified_at === null) throw MfaErrors.mfa_not_enrolled();
  await checkSecondFactor(ctx, project, userId, proof);
  await ctx.db.tenant(userScope(project, userId), async (tx) => {
    await deleteTotp(tx, userId);
    const left = await factorSummary(tx, userId);
    if (left.passkeys === 0) {
      await replaceRecoveryCodes(tx, userId, project.id, [], ctx.clock.now());
      await lowerUserSessions(tx, userId);
    }
  });
}
