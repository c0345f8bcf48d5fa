/**
 * The MFA challenge: what a first factor (password, social sign-in) leaves instead of tokens
 * when the user has a second factor. It is a 256-bit token stored as its SHA-256, good for 5
 * minutes and 5 tries, bound to its user and project, and deleted by the success that uses it:
 * a second use finds nothing. Every first factor goes through `openChallengeIfEnrolled`.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { randomToken, sha256Hex } from '../../lib/crypto.js';
import { withSecondFactor, type Assurance } from '../../lib/identity/assurance.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import type { ClientMeta, Tokens } from '../auth/sessions.js';
import { issueSession, startSession } from '../auth/sessions.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';
import type { ProjectRecord } from '../projects/cache.js';
import { factorSummary, insertChallenge, takeChallenge, tryChallenge } from './queries.js';
import { checkSecondFactor, userScope, type SecondFactorProof } from './second-factor.js';

export const CHALLENGE_TTL_SECONDS = 300;
export const CHALLENGE_MAX_TRIES = 5;

export type SecondFactorMethod = 'totp' | 'recovery_code' | 'passkey';

export interface OpenedChallenge {
  challengeId: string;
  methods: SecondFactorMethod[];
  expiresIn: number;
}

/** The methods the user can complete a challenge with; empty when they have no second factor. */
export async function secondFactorMethods(db: Tx, userId: string): Promise<SecondFactorMethod[]> {
  const f = await factorSummary(db, userId);
  const methods: SecondFactorMethod[] = [];
  if (f.totp) methods.push('totp');
  if (f.passkeys > 0) methods.push('passkey');
  if (methods.length) methods.push('recovery_code');
  return methods;
}

/**
 * After a first factor: null when the user has no second factor (the caller issues tokens),
 * else a stored challenge (and no tokens). Runs in the caller's scope or transaction.
 */
export async function openChallengeIfEnrolled(ctx: AppContext, db: Tx, project: ProjectRecord, userId: string, first: Assurance): Promise<OpenedChallenge | null> {
  const methods = await secondFactorMethods(db, userId);
  if (!methods.length) return null;
  const challengeId = randomToken(32);
  const now = ctx.clock.now();
  await insertChallenge(db, {
    idHash: sha256Hex(challengeId),
    projectId: project.id,
    userId,
    amr: first.amr,
    webauthnChallenge: null,
    now,
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000),
  });
  return { challengeId, methods, expiresIn: CHALLENGE_TTL_SECONDS };
}

/** A live challenge with one try counted, or 400 `mfa_challenge_invalid`. */
export async function useChallengeTry(ctx: AppContext, project: ProjectRecord, challengeId: string) {
  const idHash = sha256Hex(challengeId);
  const row = await ctx.db.read({ projectId: project.id, keyKind: 'publishable', account: true }, (db) => tryChallenge(db, idHash, CHALLENGE_MAX_TRIES, ctx.clock.now()));
  if (!row) throw MfaErrors.mfa_challenge_invalid();
  return { idHash, userId: row.user_id, amr: row.amr, webauthnChallenge: row.webauthn_challenge };
}

/**
 * Takes the challenge and opens the session at aal2 in one transaction: of two concurrent
 * successes only one gets a session. Its tokens after the commit (issueSession).
 */
export async function finishChallenge(ctx: AppContext, project: ProjectRecord, idHash: string, userId: string, assurance: Assurance, meta: ClientMeta): Promise<Tokens> {
  const started = await ctx.db.tenant(userScope(project, userId), async (tx) => {
    if (!(await takeChallenge(tx, idHash, userId))) throw MfaErrors.mfa_challenge_invalid();
    const started = await startSession(ctx, tx, project, userId, meta, assurance);
    await enqueueAuthHooks(ctx, tx, project.id, 'sign-in', userId, 'mfa');
    return started;
  });
  return issueSession(ctx, project, started);
}

/** Completes a challenge with a TOTP or recovery code: the tokens of a new aal2 session and the user id. */
export async function completeWithCode(ctx: AppContext, project: ProjectRecord, challengeId: string, proof: SecondFactorProof, meta: ClientMeta) {
  const c = await useChallengeTry(ctx, project, challengeId);
  const method = await checkSecondFactor(ctx, project, c.userId, proof);
  const tokens = await finishChallenge(ctx, project, c.idHash, c.userId, withSecondFactor(c.amr, method, ctx.clock.now()), meta);
  return { userId: c.userId, tokens };
}
