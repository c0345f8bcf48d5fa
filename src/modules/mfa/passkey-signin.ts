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
import { accountAssertionOptions, beginSignin, checkAssertion } from '../../lib/identity/passkey-ceremony.js';
import type { AuthenticationResponseJSON } from '../../lib/identity/passkeys.js';
import { AuthErrors } from '../auth/errors.js';
import { findUserById } from '../auth/queries.js';
import { issueSession, startSession, type ClientMeta } from '../auth/sessions.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';
import type { ProjectRecord } from '../projects/cache.js';
import { finishChallenge, useChallengeTry } from './challenge.js';
import { PasskeyErrors } from './errors.js';
import { setMfaWebauthnChallenge } from './passkey-queries.js';
import { userPasskeyStore } from './passkey-store.js';
import { findLiveChallenge } from './queries.js';
import { relyingPartyOf } from './relying-party.js';
import { checkSecondFactor, userScope } from './second-factor.js';

const projectScope = (project: ProjectRecord) => ({ projectId: project.id, keyKind: 'publishable' as const, account: true });

/** Options for a discoverable sign-in (no allowCredentials), its challenge stored for one use. */
export async function passkeySigninOptions(ctx: AppContext, project: ProjectRecord) {
  const rp = relyingPartyOf(project);
  return ctx.db.read(projectScope(project), (db) => beginSignin(userPasskeyStore(db, project.id), rp, ctx.clock.now()));
}

export async function signInWithPasskey(ctx: AppContext, project: ProjectRecord, response: AuthenticationResponseJSON, meta: ClientMeta) {
  const rp = relyingPartyOf(project);
  const now = ctx.clock.now();
  // A credential of another project (another relying party) is simply not found here.
  const out = await ctx.db.read(projectScope(project), (db) => checkAssertion(userPasskeyStore(db, project.id), rp, response, {
    ownerId: null,
    onCounterRegressed: (p) => ctx.log.warn({ audit: 'passkey.counter_regressed', projectId: project.id, userId: p.ownerId, passkeyId: p.id }, 'audit: a passkey counter went backwards'),
  }, now));
  if (!out.ok) throw out.reason === 'challenge' ? PasskeyErrors.passkey_challenge_invalid() : PasskeyErrors.passkey_invalid();
  if (!out.userVerified) throw PasskeyErrors.passkey_invalid('Passkey sign-in needs user verification (PIN or biometric).');
  const userId = out.passkey.ownerId;
  const { user, started } = await ctx.db.tenant(userScope(project, userId), async (tx) => {
    const user = await findUserById(tx, userId);
    if (!user) throw PasskeyErrors.passkey_invalid();
    if (user.disabled_at) throw AuthErrors.user_disabled();
    if (project.settings.requireEmailVerification === true && !user.email_verified) throw IdentityErrors.email_not_verified();
    const started = await startSession(ctx, tx, project, userId, meta, passkeyAssurance(true, now));
    await enqueueAuthHooks(ctx, tx, project.id, 'sign-in', user, 'passkey');
    return { user, started };
  });
  // The tokens after the commit: the token-claims function runs outside the transaction.
  return { user, tokens: await issueSession(ctx, project, started, { user }) };
}

/** Options for a passkey as the second factor of an MFA challenge: the user's own passkeys, a challenge stored with it. */
export async function mfaPasskeyOptions(ctx: AppContext, project: ProjectRecord, challengeId: string) {
  const rp = relyingPartyOf(project);
  const idHash = sha256Hex(challengeId);
  return ctx.db.read(projectScope(project), async (db) => {
    const c = await findLiveChallenge(db, idHash, ctx.clock.now());
    if (!c) throw MfaErrors.mfa_challenge_invalid();
    const options = await accountAssertionOptions(userPasskeyStore(db, project.id), rp, c.user_id);
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
