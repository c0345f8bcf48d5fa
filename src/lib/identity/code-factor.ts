/**
 * The one check of a second factor an account presents, for operators and end users alike:
 * a code of the authenticator app (one use per 30 s step, ±1 step of drift), a recovery code
 * (one use each) or, when the caller allows it, a passkey's assertion. Every check first
 * reserves a try of the account's budget (10 per 15 minutes, whatever the address or
 * challenge), so guessing a 6-digit code is limited per account and not only per address; a
 * right answer gives its try back. The adapters (CodeFactorStore) hold the account's storage:
 * src/modules/mfa/second-factor.ts for end users, src/modules/operators/mfa.ts for operators.
 * Each statement commits on its own: a failed try stays counted whatever the caller does next.
 */
import { decrypt, type Encrypted } from '../crypto.js';
import type { AmrMethod } from './assurance.js';
import { MfaErrors, PasskeyErrors } from './mfa-errors.js';
import type { OtpAudience } from './otp.js';
import { normaliseRecoveryCode, recoveryCodeHash } from './recovery-codes.js';
import { matchTotp } from './totp.js';

export const ACCOUNT_FAILURE_LIMIT = 10;
export const ACCOUNT_FAILURE_WINDOW_SECONDS = 15 * 60;

/** One account's second-factor storage, as the check needs it. */
export interface CodeFactorStore {
  /** Reserves one try of the account's budget (`limit` per `windowSeconds`); false when it is spent. */
  reserveFailure(limit: number, windowSeconds: number, now: Date): Promise<boolean>;
  /** Gives a try back (a right answer). */
  releaseFailure(): Promise<void>;
  findTotp(): Promise<{ secret: Encrypted; verified_at: unknown } | undefined>;
  /** Accepts `step` only when it is newer than the last accepted one (and confirms a pending factor when `confirm`). */
  acceptTotpStep(step: number, now: Date, confirm: boolean): Promise<boolean>;
  /** Spends an unused recovery code by its hash; false when unknown or used. */
  spendRecoveryCode(hash: string, now: Date): Promise<boolean>;
}

export interface CodeAccount {
  audience: OtpAudience;
  id: string;
  /** ENCRYPTION_KEY: decrypts the TOTP secret and keys the recovery codes' HMAC. */
  key: Buffer;
}

/** What an account presents: an app code, a recovery code, or (where allowed) a passkey assertion. */
export interface FactorProof {
  code?: string;
  recoveryCode?: string;
  passkey?: unknown;
}

export type SecondFactorUsed = Extract<AmrMethod, 'totp' | 'recovery' | 'passkey'>;

export const hasProof = (p: FactorProof): boolean => Boolean(p.code || p.recoveryCode || p.passkey);

export interface CheckOptions {
  /** The first code of an enrolment (the factor is not confirmed yet). */
  confirm?: boolean;
  /** Checks the passkey assertion (the ceremony: passkey-ceremony.ts); may throw a counter regression. */
  passkey?: () => Promise<boolean>;
}

/** The method that matched, or throws 403 `mfa_code_required`, 429 `mfa_locked`, 400 `mfa_code_invalid` / `passkey_invalid`. */
export async function checkSecondFactorWith(
  store: CodeFactorStore, account: CodeAccount, proof: FactorProof, now: Date, opts: CheckOptions = {},
): Promise<SecondFactorUsed> {
  if (!hasProof(proof) || (!proof.code && !proof.recoveryCode && !opts.passkey)) throw MfaErrors.mfa_code_required();
  if (!(await store.reserveFailure(ACCOUNT_FAILURE_LIMIT, ACCOUNT_FAILURE_WINDOW_SECONDS, now))) {
    throw MfaErrors.mfa_locked(undefined, undefined, { headers: { 'retry-after': String(ACCOUNT_FAILURE_WINDOW_SECONDS) } });
  }
  let method: SecondFactorUsed | null;
  if (proof.code !== undefined) method = (await totpMatches(store, account, proof.code, now, opts.confirm === true)) ? 'totp' : null;
  else if (proof.recoveryCode !== undefined) method = (await recoveryMatches(store, account, proof.recoveryCode, now)) ? 'recovery' : null;
  else method = (await opts.passkey!()) ? 'passkey' : null;
  if (!method) throw proof.code === undefined && proof.recoveryCode === undefined ? PasskeyErrors.passkey_invalid() : MfaErrors.mfa_code_invalid();
  await store.releaseFailure();
  return method;
}

async function totpMatches(store: CodeFactorStore, account: CodeAccount, code: string, now: Date, confirm: boolean): Promise<boolean> {
  const row = await store.findTotp();
  if (!row || (row.verified_at === null) !== confirm) return false;
  const secret = decrypt(account.key, row.secret);
  const step = secret === null ? null : matchTotp(secret, code.trim(), now);
  return step !== null && (await store.acceptTotpStep(step, now, confirm));
}

async function recoveryMatches(store: CodeFactorStore, account: CodeAccount, raw: string, now: Date): Promise<boolean> {
  const code = normaliseRecoveryCode(raw);
  return code !== null && (await store.spendRecoveryCode(recoveryCodeHash(account.key, account.audience, account.id, code), now));
}
