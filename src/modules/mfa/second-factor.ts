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
import { acceptTotpStep, findTotp, releaseFailure, reserveFailure, spendRecoveryCode } from './queries.js';

export const ACCOUNT_FAILURE_LIMIT = 10;
export const ACCOUNT_FAILURE_WINDOW_SECONDS = 15 * 60;

/** What the user typed: a code from the authenticator app or a recovery code. */
export interface SecondFactorProof {
  code?: string;
  recoveryCode?: string;
}

export const hasProof = (p: SecondFactorProof): boolean => Boolean(p.code || p.recoveryCode);

export const userScope = (project: ProjectRecord, userId: string) => ({ projectId: project.id, userId, keyKind: 'publishable' as const });

/** The method that matched, or throws 400 `mfa_code_invalid` / 429 `mfa_locked`. */
export async function checkSecondFactor(
  ctx: AppContext, project: ProjectRecord, userId: string, proof: SecondFactorProof, confirm = false,
): Promise<Extract<AmrMethod, 'totp' | 'recovery'>> {
  if (!hasProof(proof)) throw MfaErrors.mfa_code_required();
  return ctx.db.read(userScope(project, userId), async (db) => {
    const now = ctx.clock.now();
    if (!(await reserveFailure(db, userId, project.id, ACCOUNT_FAILURE_LIMIT, ACCOUNT_FAILURE_WINDOW_SECONDS, now))) {
      throw MfaErrors.mfa_locked(undefined, undefined, { headers: { 'retry-after': String(ACCOUNT_FAILURE_WINDOW_SECONDS) } });
    }
    const method = proof.code !== undefined ? await totpMatches(ctx, db, userId, proof.code, now, confirm) : await recoveryMatches(ctx, db, userId, proof.recoveryCode!, now);
    if (!method) throw MfaErrors.mfa_code_invalid();
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
