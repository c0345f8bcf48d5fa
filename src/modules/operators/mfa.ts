/**
 * Operators' second factors: the same authenticator app (TOTP), recovery codes and passkeys as
 * end users, through the same primitives and the same check (src/lib/identity/code-factor.ts:
 * single-use codes, ±1 step, 10 wrong answers per account per 15 minutes) with the operators'
 * adapter below; 5 tries per challenge; removal and regeneration only with a fresh second
 * factor in the request. A password sign-in of an operator with a factor leaves a challenge and
 * no session; completing it opens an aal2 session. Passkeys themselves: passkeys.ts.
 */
import type { AppContext } from '../../context.js';
import { encrypt, randomToken, sha256Hex } from '../../lib/crypto.js';
import { amrEntry, withSecondFactor, type AmrEntry } from '../../lib/identity/assurance.js';
import { checkSecondFactorWith, type CodeFactorStore, type SecondFactorUsed } from '../../lib/identity/code-factor.js';
import { MfaErrors, PasskeyErrors } from '../../lib/identity/mfa-errors.js';
import { checkAssertion } from '../../lib/identity/passkey-ceremony.js';
import { listPasskeys, OPERATOR_PASSKEYS } from '../../lib/identity/passkey-queries.js';
import type { AuthenticationResponseJSON } from '../../lib/identity/passkeys.js';
import { newRecoveryCodes } from '../../lib/identity/recovery-codes.js';
import { newTotpSecret, totpQrDataUrl, totpUri } from '../../lib/identity/totp.js';
import type { OperatorIdentity } from './identity.js';
import {
  acceptOperatorTotpStep, countOperatorRecoveryCodesLeft, findOperatorTotp, insertOperatorChallenge, platformSetting,
  releaseOperatorFailure, replaceOperatorRecoveryCodes, reserveOperatorFailure, setPlatformSetting, spendOperatorRecoveryCode, takeOperatorChallenge,
  tryOperatorChallenge, upsertPendingOperatorTotp,
} from './mfa-queries.js';
import { deleteOperatorTotp } from './passkey-queries.js';
import { operatorPasskeyStore } from './passkey-store.js';
import { consoleRelyingParty } from './relying-party.js';
import { issueSession, type IssuedSession } from './sessions.js';

const CHALLENGE_TTL_SECONDS = 300;
const CHALLENGE_MAX_TRIES = 5;

export interface OperatorProof {
  code?: string;
  recoveryCode?: string;
  passkey?: AuthenticationResponseJSON;
}

function operatorCodeStore(ctx: AppContext, operatorId: string): CodeFactorStore {
  const db = ctx.db.admin;
  return {
    reserveFailure: (limit, windowSeconds, now) => reserveOperatorFailure(db, operatorId, limit, windowSeconds, now),
    releaseFailure: () => releaseOperatorFailure(db, operatorId),
    findTotp: () => findOperatorTotp(db, operatorId),
    acceptTotpStep: (step, now, confirm) => acceptOperatorTotpStep(db, operatorId, step, now, confirm),
    spendRecoveryCode: (hash, now) => spendOperatorRecoveryCode(db, operatorId, hash, now),
  };
}

/**
 * The method that matched, or 400 `mfa_code_invalid` / `passkey_invalid`, 429 `mfa_locked`, 403
 * `mfa_code_required`. A passkey must sign `webauthnChallenge` (an MFA challenge's) or, without
 * it, a live sign-in challenge (POST /api/auth/passkeys/signin/options), taken once.
 */
export async function checkOperatorFactor(
  ctx: AppContext, operatorId: string, proof: OperatorProof, opts: { confirm?: boolean; webauthnChallenge?: string | null } = {},
): Promise<SecondFactorUsed> {
  const now = ctx.clock.now();
  const passkey = proof.passkey
    ? async () => (await checkAssertion(operatorPasskeyStore(ctx.db.admin), consoleRelyingParty(ctx), proof.passkey!, {
      challenge: opts.webauthnChallenge ?? null,
      ownerId: operatorId,
      onCounterRegressed: (p) => ctx.log.warn({ audit: 'operator.passkey.counter_regressed', operatorId, passkeyId: p.id }, 'audit: an operator passkey counter went backwards'),
    }, now)).ok
    : undefined;
  return checkSecondFactorWith(operatorCodeStore(ctx, operatorId), { audience: 'operator', id: operatorId, key: ctx.config.encryptionKey }, proof, now, { confirm: opts.confirm, passkey });
}

export async function startOperatorEnrolment(ctx: AppContext, operator: OperatorIdentity) {
  const existing = await findOperatorTotp(ctx.db.admin, operator.id);
  if (existing?.verified_at) throw MfaErrors.mfa_already_enrolled();
  // A stolen password-only session must not add a factor to an account that has one (a passkey).
  if (operator.hasSecondFactor && operator.aal !== 'aal2') throw MfaErrors.mfa_required();
  const secret = newTotpSecret();
  if (!(await upsertPendingOperatorTotp(ctx.db.admin, operator.id, encrypt(ctx.config.encryptionKey, secret), ctx.clock.now()))) {
    throw MfaErrors.mfa_already_enrolled();
  }
  const otpauthUri = totpUri(secret, 'Plinth', operator.email);
  return { secret, otpauthUri, qrCode: await totpQrDataUrl(otpauthUri) };
}

/** The first code: ten recovery codes (shown once; a new set replaces any earlier one) and a new aal2 session. */
export async function confirmOperatorTotp(ctx: AppContext, operator: OperatorIdentity, code: string): Promise<{ recoveryCodes: string[]; session: IssuedSession }> {
  const pending = await findOperatorTotp(ctx.db.admin, operator.id);
  if (!pending || pending.verified_at !== null) throw MfaErrors.mfa_not_enrolled();
  await checkOperatorFactor(ctx, operator.id, { code }, { confirm: true });
  const now = ctx.clock.now();
  const { codes, hashes } = newRecoveryCodes(ctx.config.encryptionKey, 'operator', operator.id);
  await replaceOperatorRecoveryCodes(ctx.db.admin, operator.id, hashes, now);
  const session = await issueSession(ctx, operator.id, undefined, withSecondFactor([amrEntry('pwd', now)], 'totp', now));
  return { recoveryCodes: codes, session };
}

export async function removeOperatorTotp(ctx: AppContext, operator: OperatorIdentity, proof: OperatorProof): Promise<void> {
  const row = await findOperatorTotp(ctx.db.admin, operator.id);
  if (!row || row.verified_at === null) throw MfaErrors.mfa_not_enrolled();
  await checkOperatorFactor(ctx, operator.id, proof);
  await deleteOperatorTotp(ctx.db.admin, operator.id);
  ctx.log.info({ audit: 'operator.mfa.removed', operatorId: operator.id }, 'audit: an operator removed their authenticator app');
}

export async function regenerateOperatorCodes(ctx: AppContext, operator: OperatorIdentity, proof: OperatorProof): Promise<string[]> {
  if (!operator.hasSecondFactor) throw MfaErrors.mfa_not_enrolled('No second factor is enrolled.');
  await checkOperatorFactor(ctx, operator.id, proof);
  const { codes, hashes } = newRecoveryCodes(ctx.config.encryptionKey, 'operator', operator.id);
  await replaceOperatorRecoveryCodes(ctx.db.admin, operator.id, hashes, ctx.clock.now());
  return codes;
}

export async function operatorFactors(ctx: AppContext, operator: OperatorIdentity) {
  const row = await findOperatorTotp(ctx.db.admin, operator.id);
  const passkeys = await listPasskeys(ctx.db.admin, OPERATOR_PASSKEYS, operator.id);
  const required = (await platformSetting(ctx.db.admin, 'operator_mfa'))?.required === true;
  return {
    totp: row ? { confirmed: row.verified_at !== null, createdAt: row.created_at } : null,
    passkeys: passkeys.map((p) => ({ id: p.id, name: p.name, createdAt: p.created_at, lastUsedAt: p.last_used_at, backedUp: p.backed_up })),
    recoveryCodesLeft: await countOperatorRecoveryCodesLeft(ctx.db.admin, operator.id),
    aal: operator.aal,
    required,
  };
}

/** After the password: a challenge when the operator has a confirmed app or a passkey, else null. */
export async function openOperatorChallenge(ctx: AppContext, operatorId: string, first: AmrEntry[]) {
  const row = await findOperatorTotp(ctx.db.admin, operatorId);
  const passkeys = await listPasskeys(ctx.db.admin, OPERATOR_PASSKEYS, operatorId);
  const methods: string[] = [];
  if (row && row.verified_at !== null) methods.push('totp');
  if (passkeys.length) methods.push('passkey');
  if (!methods.length) return null;
  methods.push('recovery_code');
  const challengeId = randomToken(32);
  const now = ctx.clock.now();
  await insertOperatorChallenge(ctx.db.admin, { idHash: sha256Hex(challengeId), operatorId, amr: first, now, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000) });
  return { challengeId, methods, expiresIn: CHALLENGE_TTL_SECONDS };
}

/** Completes an operator's challenge (an app code, a recovery code, or a passkey over the challenge's options): an aal2 session, once. */
export async function completeOperatorChallenge(ctx: AppContext, challengeId: string, proof: OperatorProof): Promise<{ operatorId: string; session: IssuedSession }> {
  const idHash = sha256Hex(challengeId);
  const c = await tryOperatorChallenge(ctx.db.admin, idHash, CHALLENGE_MAX_TRIES, ctx.clock.now());
  if (!c) throw MfaErrors.mfa_challenge_invalid();
  const passkeyOnly = proof.passkey && !proof.code && !proof.recoveryCode;
  if (passkeyOnly && !c.webauthn_challenge) throw PasskeyErrors.passkey_challenge_invalid('Ask for passkey options for this challenge first.');
  const method = await checkOperatorFactor(ctx, c.operator_id, passkeyOnly ? { passkey: proof.passkey } : { code: proof.code, recoveryCode: proof.recoveryCode }, { webauthnChallenge: c.webauthn_challenge });
  if (!(await takeOperatorChallenge(ctx.db.admin, idHash))) throw MfaErrors.mfa_challenge_invalid();
  const session = await issueSession(ctx, c.operator_id, undefined, withSecondFactor(c.amr, method, ctx.clock.now()));
  return { operatorId: c.operator_id, session };
}

/** The admin's switch: every operator must have a second factor (enrolment stays open to them). */
export async function setOperatorMfaRequired(ctx: AppContext, admin: OperatorIdentity, required: boolean): Promise<void> {
  await setPlatformSetting(ctx.db.admin, 'operator_mfa', { required }, ctx.clock.now());
  ctx.log.info({ audit: 'operator.mfa.required', operatorId: admin.id, required }, 'audit: the admin changed the operators\' second-factor requirement');
}
