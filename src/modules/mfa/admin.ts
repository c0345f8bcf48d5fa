/**
 * The project's operator and its users' second factors: which ones a user has (never a
 * secret) and a reset (an operator's answer to "I lost my phone and my codes"), which removes
 * every factor, recovery code and pending challenge, drops the user's sessions to aal1, and
 * writes an audit line to the log (who, which project, which user, what was removed).
 */
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import { AuthErrors } from '../auth/errors.js';
import { findUserById } from '../auth/queries.js';
import { lowerUserSessions } from '../auth/session-queries.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import type { Tx } from '../../db/pool.js';
import { factorsOf } from './factors.js';
import { deleteAllFactors } from './queries.js';

async function inUserScope<T>(ctx: AppContext, operator: OperatorIdentity, projectId: string, userId: string, fn: (tx: Tx) => Promise<T>) {
  const project = await loadMemberProject(ctx, operator, projectId);
  if (!isObjectId(userId)) throw Errors.invalid_id('Invalid user id.');
  return ctx.db.tenant({ projectId: project.id, keyKind: 'operator' }, async (tx) => {
    if (!(await findUserById(tx, userId))) throw AuthErrors.app_user_not_found();
    return fn(tx);
  });
}

export function userFactors(ctx: AppContext, operator: OperatorIdentity, projectId: string, userId: string) {
  return inUserScope(ctx, operator, projectId, userId, (tx) => factorsOf(tx, userId));
}

export async function resetUserFactors(ctx: AppContext, operator: OperatorIdentity, projectId: string, userId: string): Promise<void> {
  const removed = await inUserScope(ctx, operator, projectId, userId, async (tx) => {
    const before = await factorsOf(tx, userId);
    await deleteAllFactors(tx, userId);
    await lowerUserSessions(tx, userId);
    return before;
  });
  ctx.log.info(
    { audit: 'mfa.reset', operatorId: operator.id, projectId, userId, totp: removed.totp !== null, passkeys: removed.passkeys.length, recoveryCodes: removed.recoveryCodesLeft },
    "audit: an operator reset an end user's second factors",
  );
}
