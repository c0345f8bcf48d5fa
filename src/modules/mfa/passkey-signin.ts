/**
 * Signing in with a passkey: discoverable (no email typed: the authenticator names the
 * account), or as the second factor of an MFA challenge. A discoverable sign-in needs user
 * verification (PIN or biometric) and opens an aal2 session; the assertion must sign a
 * single-use challenge of this project, by a credential registered in this project, with a
 * counter that grew.
 */
import type { AppContext } from '../../context.js';
import { sha256Hex } from '../../lib/crypto.js';
import { passkeyAssurance, withSecondFactor } from '../../lib/identity/assurance.js';
import { IdentityErrors } from '../../lib/identity/errors.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { authenticationOptions, PASSKEY_CHALLENGE_TTL_SECONDS, signedChallenge, verifyAssertion, type AuthenticationResponseJSON } from '../../lib/identity/passkeys.js';
import { AuthErrors } from '../auth/errors.js';
import { findUserById } from '../auth/queries.js';
import { startSession, type ClientMeta } from '../auth/sessions.js';
import type { ProjectRecord } from '../projects/cache.js';
import { finishChallenge, useChallengeTry } from './challenge.js';
import { PasskeyErrors } from './errors.js';
import { findPasskeyByCredential, insertWebauthnChallenge, listPasskeys, recordPasskeyUse, setMfaWebauthnChallenge, takeWebauthnChallenge } from './passkey-queries.js';
import { findLiveChallenge } from './queries.js';
import { relyingPartyOf, storedOf } from './relying-party.js';
import { checkSecondFactor, userScope } from './second-factor.js';

const projectScope = (project: ProjectRecord) => ({ projectId: project.id, keyKind: 'publishable' as const });

/** Options for a discoverable sign-in (no allowCredentials), its challenge stored for one use. */
export async function passkeySigninOptions(ctx: AppContext, project: ProjectRecord) {
  const rp = relyingPartyOf(project);
  const options = await authenticationOptions(rp, []);
  const expiresAt = new Date(ctx.clock.now().getTime() + PASSKEY_CHALLENGE_TTL_SECONDS * 1000);
  await ctx.db.read(projectScope(project), (db) => insertWebauthnChallenge(db, { challenge: options.challenge, projectId: project.id, userId: null, purpose: 'signin', expiresAt }));
  return options;
}

export async function signInWithPasskey(ctx: AppContext, project: ProjectRecord, response: AuthenticationResponseJSON, meta: ClientMeta) {
  const rp = relyingPartyOf(project);
  const now = ctx.clock.now();
  const challenge = signedChallenge(response);
  const found = await ctx.db.read(projectScope(project), async (db) => {
    if (!challenge || !(await takeWebauthnChallenge(db, challenge, 'signin', null, now))) throw PasskeyErrors.passkey_challenge_invalid();
    return typeof response.id === 'string' ? findPasskeyByCredential(db, response.id) : undefined;
  });
  // A credential of another project (another relying party) is simply not found here.
  if (!found) throw PasskeyErrors.passkey_invalid();
  const check = await verifyAssertion(rp, response, challenge!, storedOf(found));
  if (!check.ok && check.reason === 'counter') {
    ctx.log.warn({ audit: 'passkey.counter_regressed', projectId: project.id, userId: found.user_id, passkeyId: found.id }, 'audit: a passkey counter went backwards');
    throw PasskeyErrors.passkey_counter_regressed();
  }
  if (!check.ok) throw PasskeyErrors.passkey_invalid();
  if (!check.userVerified) throw PasskeyErrors.passkey_invalid('Passkey sign-in needs user verification (PIN or biometric).');
  const userId = found.user_id;
  return ctx.db.tenant(userScope(project, userId), async (tx) => {
    if (!(await recordPasskeyUse(tx, found.id, check.newCounter, check.backedUp, now))) throw PasskeyErrors.passkey_invalid();
    const user = await findUserById(tx, userId);
    if (!user) throw PasskeyErrors.passkey_invalid();
    if (user.disabled_at) throw AuthErrors.user_disabled();
    if (project.settings.requireEmailVerification === true && !user.email_verified) throw IdentityErrors.email_not_verified();
    return { user, tokens: await startSession(ctx, tx, project, userId, meta, passkeyAssurance(true, now)) };
  });
}

/** Options for a passkey as the second factor of an MFA challenge: the user's own passkeys, a challenge stored with it. */
export async function mfaPasskeyOptions(ctx: AppContext, project: ProjectRecord, challengeId: string) {
  const rp = relyingPartyOf(project);
  const idHash = sha256Hex(challengeId);
  return ctx.db.read(projectScope(project), async (db) => {
    const c = await findLiveChallenge(db, idHash, ctx.clock.now());
    if (!c) throw MfaErrors.mfa_challenge_invalid();
    const mine = await listPasskeys(db, c.user_id);
    if (!mine.length) throw PasskeyErrors.passkey_not_found('No passkey is registered for this account.');
    const options = await authenticationOptions(rp, mine.map((p) => storedOf(p)));
    await setMfaWebauthnChallenge(db, idHash, options.challenge);
    return options;
  });
}

/** Completes an MFA challenge with a passkey assertion over its stored challenge. */
export async function completeWithPasskey(ctx: AppContext, project: ProjectRecord, challengeId: string, response: AuthenticationResponseJSON, meta: ClientMeta) {
  const c = await useChallengeTry(ctx, project, challengeId);
  if (!c.webauthnChallenge) throw PasskeyErrors.passkey_challenge_invalid('Ask for passkey options for this challenge first.');
  await checkSecondFactor(ctx, project, c.userId, { passkey: response }, { webauthnChallenge: c.webauthnChallenge });
  const tokens = await finishChallenge(ctx, project, c.idHash, c.userId, withSecondFactor(c.amr, 'passkey', ctx.clock.now()), meta);
  return { userId: c.userId, tokens };
}
