/**
 * Authentication assurance of a session, for operators and end users alike (as Supabase's
 * `aal`/`amr`): `aal1` after one factor, `aal2` after a second (TOTP, a recovery code, a
 * passkey) or a passkey with user verification alone (possession plus PIN or biometric).
 * Access tokens carry `aal`, `amr` (the methods, newest last, each with its time in epoch
 * seconds) and `sid` (the session family), so apps and row-level policies can demand `aal2`.
 */
export type Aal = 'aal1' | 'aal2';
export type AmrMethod = 'pwd' | 'oauth' | 'otp' | 'magiclink' | 'anonymous' | 'totp' | 'recovery' | 'passkey';
export interface AmrEntry {
  method: AmrMethod;
  timestamp: number;
}
export interface Assurance {
  aal: Aal;
  amr: AmrEntry[];
}

const SECOND_FACTORS = new Set<AmrMethod>(['totp', 'recovery', 'passkey']);

export const amrEntry = (method: AmrMethod, now: Date): AmrEntry => ({ method, timestamp: Math.floor(now.getTime() / 1000) });

/** One factor: aal1 (a user-verified passkey alone is aal2: see passkeyAssurance). */
export const firstFactor = (method: AmrMethod, now: Date): Assurance => ({ aal: 'aal1', amr: [amrEntry(method, now)] });

/** A first factor completed by a second one: aal2. */
export function withSecondFactor(first: AmrEntry[], method: AmrMethod, now: Date): Assurance {
  return { aal: 'aal2', amr: [...first, amrEntry(method, now)] };
}

export const passkeyAssurance = (userVerified: boolean, now: Date): Assurance =>
  ({ aal: userVerified ? 'aal2' : 'aal1', amr: [amrEntry('passkey', now)] });

/** The assurance claims of a token payload; tokens issued before assurance existed are aal1. */
export function assuranceOf(payload: Record<string, unknown>): Assurance {
  const aal: Aal = payload.aal === 'aal2' ? 'aal2' : 'aal1';
  const amr = Array.isArray(payload.amr) ? (payload.amr as AmrEntry[]) : [];
  // aal2 stands only with a second factor among the methods (a claim set by us, checked anyway).
  return aal === 'aal2' && !amr.some((e) => SECOND_FACTORS.has(e.method)) ? { aal: 'aal1', amr } : { aal, amr };
}
