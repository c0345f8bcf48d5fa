/**
 * Checks a second factor a user presents: a TOTP code (one use per 30 s step, ±1 step of
 * drift) or a recovery code (one use each). Every check first reserves a try of the account's
 * budget (10 per 15 minutes, whatever the address or challenge), so guessing a 6-digit code
 * is limited per account and not only per address; a right answer gives its try back. Each
 * statement commits on its own: a failed try stays counted whatever the caller does next.
 */
import type { AppContext } from '../../context.js';
import { decrypt } from '../../lib/crypto.js';
import type { AmrMethod } from '../../lib/identity/assurance.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { normaliseRecoveryCode, recoveryCodeHash } from '../../lib/identity/recovery-codes.js';
import { matchTotp } from '../../lib/identity/totp.js';
import type { ProjectRecord } from '../projects/cache.js';
import { signedChallenge, verifyAssertion, type AuthenticationResponseJSON } from '../../lib/identity/passkeys.js';
import { PasskeyErrors } from './errors.js';
import { findPasskeyByCredential, recordPasskeyUse, takeWebauthnChallenge } from './passkey-queries.js';
import { relyingPartyOf, storedOf } from './relying-party.js';
import { acceptTotpStep, findTotp, releaseFailure, reserveFailure, spendRecoveryCode } from './queries.js';

export const ACCOUNT_FAILURE_LIMIT = 10;
export const ACCOUNT_FAILURE_WINDOW_SECONDS = 15 * 60;

/** What the user presents: a code from the authenticator app, a recovery code, or a passkey's assertion. */
export interface SecondFactorProof {
  code?: string;
  recoveryCode?: string;
  passkey?: AuthenticationResponseJSON;
}

export const hasProof = (p: SecondFactorProof): boolean => Boolean(p.code || p.recoveryCode || p.passkey);

export interface CheckOptions {
  /** The first code of an enrolment (the factor is not verified yet). */
  confirm?: boolean;
  /**
   * The challenge a passkey must have signed (an MFA challenge's). Without it, the assertion
   * must sign a live sign-in challenge of the project (POST …/passkeys/signin/options), taken once.
   */
  webauthnChallenge?: string | null;
}

export const userScope = (project: ProjectRecord, userId: string) => ({ projectId: project.id, userId, keyKind: 'publishable' as const });

/** The method that matched, or throws 400 `mfa_code_invalid` / 429 `mfa_locked`. */
export async function checkSecondFactor(
  ctx: AppContext, project: ProjectRecord, userId: string, proof: SecondFactorProof, opts: CheckOptions = {},
): Promise<Extract<AmrMethod, 'totp' | 'recovery' | 'passkey'>> {
  if (!hasProof(proof)) throw MfaErrors.mfa_code_required();
  return ctx.db.read(userScope(project, userId), async (db) => {
    const now = ctx.clock.now();
    if (!(await reserveFailure(db, userId, project.id, ACCOUNT_FAILURE_LIMIT, ACCOUNT_FAILURE_WINDOW_SECONDS, now))) {
      throw MfaErrors.mfa_locked(undefined, undefined, { headers: { 'retry-after': String(ACCOUNT_FAILURE_WINDOW_SECONDS) } });
    }
    const method = proof.code !== undefined
      ? await totpMatches(ctx, db, userId, proof.code, now, opts.confirm === true)
      : proof.recoveryCode !== undefined
        ? await recoveryMatches(ctx, db, userId, proof.recoveryCode, now)
        : await passkeyMatches(ctx, db, project, userId, proof.passkey!, opts.webauthnChallenge ?? null, now);
    if (!method) throw proof.passkey && !proof.code && !proof.recoveryCode ? PasskeyErrors.passkey_invalid() : MfaErrors.mfa_code_invalid();
    await releaseFailure(db, userId);
    return method;
  });
}

type Db = Parameters<typeof findTotp>[0];

async function totpMatches(ctx: AppContext, db: Db, userId: string, code: string, now: Date, confirm: boolean): Promise<'totp' | null> {
  const row = await findTotp(db, userId);
  if (!row || (row.verified_at === null) !== confirm) return null;
  const secret = decrypt(ctx.config.encryptionKey, row.secret);
  const step = secret === null ? null : matchTotp(secret, code.trim(), now);
  if (step === null) return null;
  return (await acceptTotpStep(db, userId, step, now, confirm)) ? 'totp' : null;
}

async function recoveryMatches(ctx: AppContext, db: Db, userId: string, raw: string, now: Date): Promise<'recovery' | null> {
  const code = normaliseRecoveryCode(raw);
  if (!code) return null;
  const hash = recoveryCodeHash(ctx.config.encryptionKey, 'app-user', userId, code);
  return (await spendRecoveryCode(db, userId, hash, now)) ? 'recovery' : null;
}

/** The user's own passkey signed the expected challenge (its counter grew): 'passkey'. */
async function passkeyMatches(
  ctx: AppContext, db: Db, project: ProjectRecord, userId: string, response: AuthenticationResponseJSON, expected: string | null, now: Date,
): Promise<'passkey' | null> {
  const signed = signedChallenge(response);
  if (!signed) return null;
  if (expected === null) {
    if (!(await takeWebauthnChallenge(db, signed, 'signin', null, now))) return null;
  } else if (signed !== expected) return null;
  const row = typeof response.id === 'string' ? await findPasskeyByCredential(db, response.id) : undefined;
  if (!row || row.user_id !== userId) return null;
  const check = await verifyAssertion(relyingPartyOf(project), response, signed, storedOf(row));
  if (!check.ok) {
    if (check.reason !== 'counter') return null;
    ctx.log.warn({ audit: 'passkey.counter_regressed', projectId: project.id, userId, passkeyId: row.id }, 'audit: a passkey counter went backwards');
    throw PasskeyErrors.passkey_counter_regressed();
  }
  return (await recordPasskeyUse(db, row.id, check.newCounter, check.backedUp, now)) ? 'passkey' : null;
}
