/**
 * Checks a second factor a user presents (a TOTP code, a recovery code or a passkey's
 * assertion): the end users' adapters of the one check shared with operators
 * (src/lib/identity/code-factor.ts: single-use codes, the per-account failure budget) and of
 * the WebAuthn ceremony (src/lib/identity/passkey-ceremony.ts).
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { checkSecondFactorWith, type CodeFactorStore, type SecondFactorUsed } from '../../lib/identity/code-factor.js';
import { checkAssertion } from '../../lib/identity/passkey-ceremony.js';
import type { AuthenticationResponseJSON } from '../../lib/identity/passkeys.js';
import type { ProjectRecord } from '../projects/cache.js';
import { userPasskeyStore } from './passkey-store.js';
import { relyingPartyOf } from './relying-party.js';
import { acceptTotpStep, findTotp, releaseFailure, reserveFailure, spendRecoveryCode } from './queries.js';

/** What the user presents: a code from the authenticator app, a recovery code, or a passkey's assertion. */
export interface SecondFactorProof {
  code?: string;
  recoveryCode?: string;
  passkey?: AuthenticationResponseJSON;
}

export interface CheckOptions {
  /** The first code of an enrolment (the factor is not verified yet). */
  confirm?: boolean;
  /**
   * The challenge a passkey must have signed (an MFA challenge's). Without it, the assertion
   * must sign a live sign-in challenge of the project (POST …/passkeys/signin/options), taken once.
   */
  webauthnChallenge?: string | null;
}

export const userScope = (project: ProjectRecord, userId: string) => ({ projectId: project.id, userId, keyKind: 'publishable' as const, account: true });

function userCodeStore(db: Tx, project: ProjectRecord, userId: string): CodeFactorStore {
  return {
    reserveFailure: (limit, windowSeconds, now) => reserveFailure(db, userId, project.id, limit, windowSeconds, now),
    releaseFailure: () => releaseFailure(db, userId),
    findTotp: () => findTotp(db, userId),
    acceptTotpStep: (step, now, confirm) => acceptTotpStep(db, userId, step, now, confirm),
    spendRecoveryCode: (hash, now) => spendRecoveryCode(db, userId, hash, now),
  };
}

/** The method that matched, or throws 400 `mfa_code_invalid` / `passkey_invalid`, 429 `mfa_locked`. */
export async function checkSecondFactor(
  ctx: AppContext, project: ProjectRecord, userId: string, proof: SecondFactorProof, opts: CheckOptions = {},
): Promise<SecondFactorUsed> {
  return ctx.db.read(userScope(project, userId), async (db) => {
    const now = ctx.clock.now();
    const passkey = proof.passkey
      ? async () => {
        const out = await checkAssertion(userPasskeyStore(db, project.id), relyingPartyOf(project), proof.passkey!, {
          challenge: opts.webauthnChallenge ?? null,
          ownerId: userId,
          onCounterRegressed: (p) => ctx.log.warn({ audit: 'passkey.counter_regressed', projectId: project.id, userId, passkeyId: p.id }, 'audit: a passkey counter went backwards'),
        }, now);
        return out.ok;
      }
      : undefined;
    return checkSecondFactorWith(userCodeStore(db, project, userId), { audience: 'app-user', id: userId, key: ctx.config.encryptionKey }, proof, now, { confirm: opts.confirm, passkey });
  });
}
