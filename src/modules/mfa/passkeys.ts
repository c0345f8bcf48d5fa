/**
 * An end user's passkeys: registration (options, then the authenticator's response, checked
 * against the project's relying party id and origins and a single-use challenge), list,
 * rename and removal (removal needs a fresh second factor, as for the authenticator app).
 * The first passkey of a user without a second factor brings ten recovery codes.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { randomId } from '../../lib/ids.js';
import { withSecondFactor } from '../../lib/identity/assurance.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { beginRegistration, finishRegistration, passkeyName } from '../../lib/identity/passkey-ceremony.js';
import { deletePasskey, insertPasskey, listPasskeys, renamePasskey, USER_PASSKEYS } from '../../lib/identity/passkey-queries.js';
import type { RegistrationResponseJSON } from '../../lib/identity/passkeys.js';
import { newRecoveryCodes } from '../../lib/identity/recovery-codes.js';
import { clearAnonymous, findUserById } from '../auth/queries.js';
import { lowerUserSessions, raiseSessionAssurance } from '../auth/session-queries.js';
import { accessTokenFor } from '../auth/sessions.js';
import type { UserTokenClaims } from '../auth/tokens.js';
import type { ProjectRecord } from '../projects/cache.js';
import { PasskeyErrors } from './errors.js';
import { relyingPartyOf } from './relying-party.js';
import { userPasskeyStore } from './passkey-store.js';
import { countRecoveryCodesLeft, factorSummary, replaceRecoveryCodes } from './queries.js';
import { checkSecondFactor, userScope, type SecondFactorProof } from './second-factor.js';

/** Registration options; adding a factor to an account that has one needs an aal2 session. */
export async function passkeyRegistrationOptions(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims) {
  const rp = relyingPartyOf(project);
  const { userId } = caller;
  return ctx.db.tenant(userScope(project, userId), async (tx) => {
    const f = await factorSummary(tx, userId);
    if ((f.totp || f.passkeys > 0) && caller.aal !== 'aal2') throw MfaErrors.mfa_required();
    const user = await findUserById(tx, userId);
    if (!user) throw MfaErrors.mfa_required('Sign in again.');
    return beginRegistration(userPasskeyStore(tx, project.id), rp, { id: userId, name: user.email ?? `guest-${userId.slice(-8)}` }, ctx.clock.now());
  });
}

export async function registerPasskey(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, name: string, response: RegistrationResponseJSON) {
  const rp = relyingPartyOf(project);
  const { userId } = caller;
  const label = passkeyName(name, 'Passkey');
  const now = ctx.clock.now();
  const cred = await ctx.db.read(userScope(project, userId), (db) => finishRegistration(userPasskeyStore(db, project.id), rp, userId, response, now));
  const assurance = withSecondFactor(caller.amr, 'passkey', now);
  const out = await ctx.db.tenant(userScope(project, userId), async (tx) => {
    const firstFactor = (await countRecoveryCodesLeft(tx, userId)) === 0 && !(await factorSummary(tx, userId)).totp;
    const id = randomId();
    const stored = await insertPasskey(tx, USER_PASSKEYS, { project_id: project.id }, { id, ownerId: userId, ...cred, rpId: rp.rpId, name: label, now });
    if (!stored) throw PasskeyErrors.passkey_invalid('This passkey is already registered.');
    const codes = firstFactor ? newRecoveryCodes(ctx.config.encryptionKey, 'app-user', userId) : null;
    if (codes) await replaceRecoveryCodes(tx, userId, project.id, codes.hashes, now);
    if (caller.sid) await raiseSessionAssurance(tx, caller.sid, userId, assurance.aal, assurance.amr, now);
    // A guest with a passkey can come back: no longer anonymous (docs/auth.md "Anonymous users").
    await clearAnonymous(tx, userId, now);
    return { id, recoveryCodes: codes?.codes };
  });
  const accessToken = caller.sid ? await accessTokenFor(ctx, project, userId, { sid: caller.sid, ...assurance }) : undefined;
  return { passkey: { id: out.id, name: label }, ...(out.recoveryCodes ? { recoveryCodes: out.recoveryCodes } : {}), ...(accessToken ? { accessToken } : {}) };
}

export async function myPasskeys(ctx: AppContext, project: ProjectRecord, userId: string) {
  const rows = await ctx.db.read(userScope(project, userId), (db) => listPasskeys(db, USER_PASSKEYS, userId));
  return rows.map((p) => ({ id: p.id, name: p.name, createdAt: p.created_at, lastUsedAt: p.last_used_at, backedUp: p.backed_up }));
}

export async function renameMyPasskey(ctx: AppContext, project: ProjectRecord, userId: string, id: string, name: string): Promise<void> {
  const label = passkeyName(name);
  const done = await ctx.db.read(userScope(project, userId), (db) => renamePasskey(db, USER_PASSKEYS, userId, id, label));
  if (!done) throw PasskeyErrors.passkey_not_found();
}

/** Removes a passkey after a fresh second factor; the last factor gone takes the recovery codes and aal2 with it. */
export async function removeMyPasskey(ctx: AppContext, project: ProjectRecord, userId: string, id: string, proof: SecondFactorProof): Promise<void> {
  const mine = await ctx.db.read(userScope(project, userId), (db) => listPasskeys(db, USER_PASSKEYS, userId));
  if (!mine.some((p) => p.id === id)) throw PasskeyErrors.passkey_not_found();
  await checkSecondFactor(ctx, project, userId, proof);
  await ctx.db.tenant(userScope(project, userId), async (tx: Tx) => {
    if (!(await deletePasskey(tx, USER_PASSKEYS, userId, id))) throw PasskeyErrors.passkey_not_found();
    const left = await factorSummary(tx, userId);
    if (!left.totp && left.passkeys === 0) {
      await replaceRecoveryCodes(tx, userId, project.id, [], ctx.clock.now());
      await lowerUserSessions(tx, userId);
    }
  });
}
