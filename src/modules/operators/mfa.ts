/**
 * Operators' second factor: the same authenticator app (TOTP) and recovery codes as end users
 * (primitives in src/lib/identity/), the same rules: single-use codes (±1 step), 5 tries per
 * challenge and 10 wrong codes per account per 15 minutes, removal and regeneration only with
 * a fresh code in the request. A password sign-in of an operator with a factor leaves a
 * challenge and no session; completing it opens an aal2 session.
 */
import type { AppContext } from '../../context.js';
import { decrypt, encrypt, randomToken, sha256Hex } from '../../lib/crypto.js';
import { amrEntry, withSecondFactor, type AmrEntry } from '../../lib/identity/assurance.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { newRecoveryCodes, normaliseRecoveryCode, recoveryCodeHash } from '../../lib/identity/recovery-codes.js';
import { matchTotp, newTotpSecret, totpQrDataUrl, totpUri } from '../../lib/identity/totp.js';
import type { OperatorIdentity } from './identity.js';
import {
  acceptOperatorTotpStep, countOperatorRecoveryCodesLeft, deleteOperatorFactors, findOperatorTotp, insertOperatorChallenge, platformSetting,
  releaseOperatorFailure, replaceOperatorRecoveryCodes, reserveOperatorFailure, setPlatformSetting, spendOperatorRecoveryCode, takeOperatorChallenge,
  tryOperatorChallenge, upsertPendingOperatorTotp,
} from './mfa-queries.js';
import { issueSession, type IssuedSession } from './sessions.js';

const CHALLENGE_TTL_SECONDS = 300;
const CHALLENGE_MAX_TRIES = 5;
const FAILURE_LIMIT = 10;
const FAILURE_WINDOW_SECONDS = 15 * 60;

export interface OperatorProof {
  code?: string;
  recoveryCode?: string;
}

/** The method that matched, or 400 `mfa_code_invalid` / 429 `mfa_locked` / 403 `mfa_code_required`. */
async function checkOperatorFactor(ctx: AppContext, operatorId: string, proof: OperatorProof, confirm = false): Promise<'totp' | 'recovery'> {
  if (!proof.code && !proof.recoveryCode) throw MfaErrors.mfa_code_required();
  const db = ctx.db.admin;
  const now = ctx.clock.now();
  if (!(await reserveOperatorFailure(db, operatorId, FAILURE_LIMIT, FAILURE_WINDOW_SECONDS, now))) {
    throw MfaErrors.mfa_locked(undefined, undefined, { headers: { 'retry-after': String(FAILURE_WINDOW_SECONDS) } });
  }
  let method: 'totp' | 'recovery' | null = null;
  if (proof.code !== undefined) {
    const row = await findOperatorTotp(db, operatorId);
    const secret = row && (row.verified_at === null) === confirm ? decrypt(ctx.config.encryptionKey, row.secret) : null;
    const step = secret ? matchTotp(secret, proof.code.trim(), now) : null;
    if (step !== null && (await acceptOperatorTotpStep(db, operatorId, step, now, confirm))) method = 'totp';
  } else {
    const code = normaliseRecoveryCode(proof.recoveryCode!);
    const hash = code && recoveryCodeHash(ctx.config.encryptionKey, 'operator', operatorId, code);
    if (hash && (await spendOperatorRecoveryCode(db, operatorId, hash, now))) method = 'recovery';
  }
  if (!method) throw MfaErrors.mfa_code_invalid();
  await releaseOperatorFailure(db, operatorId);
  return method;
}

export async function startOperatorEnrolment(ctx: AppContext, operator: OperatorIdentity) {
  const secret = newTotpSecret();
  if (!(await upsertPendingOperatorTotp(ctx.db.admin, operator.id, encrypt(ctx.config.encryptionKey, secret), ctx.clock.now()))) {
    throw MfaErrors.mfa_already_enrolled();
  }
  const otpauthUri = totpUri(secret, 'Plinth', operator.email);
  return { secret, otpauthUri, qrCode: await totpQrDataUrl(otpauthUri) };
}

/** The first code: ten recovery codes (shown once) and a new aal2 session. */
export async function confirmOperatorTotp(ctx: AppContext, operator: OperatorIdentity, code: string): Promise<{ recoveryCodes: string[]; session: IssuedSession }> {
  const pending = await findOperatorTotp(ctx.db.admin, operator.id);
  if (!pending || pending.verified_at !== null) throw MfaErrors.mfa_not_enrolled();
  await checkOperatorFactor(ctx, operator.id, { code }, true);
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
  await deleteOperatorFactors(ctx.db.admin, operator.id);
  ctx.log.info({ audit: 'operator.mfa.removed', operatorId: operator.id }, 'audit: an operator removed their authenticator app');
}

export async function regenerateOperatorCodes(ctx: AppContext, operator: OperatorIdentity, proof: OperatorProof): Promise<string[]> {
  if (!operator.hasSecondFactor) throw MfaErrors.mfa_not_enrolled();
  await checkOperatorFactor(ctx, operator.id, proof);
  const { codes, hashes } = newRecoveryCodes(ctx.config.encryptionKey, 'operator', operator.id);
  await replaceOperatorRecoveryCodes(ctx.db.admin, operator.id, hashes, ctx.clock.now());
  return codes;
}

export async function operatorFactors(ctx: AppContext, operator: OperatorIdentity) {
  const row = await findOperatorTotp(ctx.db.admin, operator.id);
  const required = (await platformSetting(ctx.db.admin, 'operator_mfa'))?.required === true;
  return {
    totp: row ? { confirmed: row.verified_at !== null, createdAt: row.created_at } : null,
    recoveryCodesLeft: await countOperatorRecoveryCodesLeft(ctx.db.admin, operator.id),
    aal: operator.aal,
    required,
  };
}

/** After the password: a challenge when the operator has a confirmed app, else null. */
export async function openOperatorChallenge(ctx: AppContext, operatorId: string, first: AmrEntry[]) {
  const row = await findOperatorTotp(ctx.db.admin, operatorId);
  if (!row || row.verified_at === null) return null;
  const challengeId = randomToken(32);
  const now = ctx.clock.now();
  await insertOperatorChallenge(ctx.db.admin, { idHash: sha256Hex(challengeId), operatorId, amr: first, now, expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000) });
  return { challengeId, methods: ['totp', 'recovery_code'], expiresIn: CHALLENGE_TTL_SECONDS };
}

/** Completes an operator's challenge: an aal2 session, once. */
export async function completeOperatorChallenge(ctx: AppContext, challengeId: string, proof: OperatorProof): Promise<{ operatorId: string; session: IssuedSession }> {
  const idHash = sha256Hex(challengeId);
  const c = await tryOperatorChallenge(ctx.db.admin, idHash, CHALLENGE_MAX_TRIES, ctx.clock.now());
  if (!c) throw MfaErrors.mfa_challenge_invalid();
  const method = await checkOperatorFactor(ctx, c.operator_id, proof);
  if (!(await takeOperatorChallenge(ctx.db.admin, idHash))) throw MfaErrors.mfa_challenge_invalid();
  const session = await issueSession(ctx, c.operator_id, undefined, withSecondFactor(c.amr, method, ctx.clock.now()));
  return { operatorId: c.operator_id, session };
}

/** The admin's switch: every operator must have a second factor (enrolment stays open to them). */
export async function setOperatorMfaRequired(ctx: AppContext, admin: OperatorIdentity, required: boolean): Promise<void> {
  await setPlatformSetting(ctx.db.admin, 'operator_mfa', { required }, ctx.clock.now());
  ctx.log.info({ audit: 'operator.mfa.required', operatorId: admin.id, required }, 'audit: the admin changed the operators\' second-factor requirement');
}
