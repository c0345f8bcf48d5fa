/**
 * Recovery codes of an end user: regenerating them needs a fresh second factor in the request
 * (a code from the app, or one of the current recovery codes) and voids the whole old set.
 */
import type { AppContext } from '../../context.js';
import { MfaErrors } from '../../lib/identity/mfa-errors.js';
import { newRecoveryCodes } from '../../lib/identity/recovery-codes.js';
import type { ProjectRecord } from '../projects/cache.js';
import { factorSummary, replaceRecoveryCodes } from './queries.js';
import { checkSecondFactor, userScope, type SecondFactorProof } from './second-factor.js';

export async function regenerateRecoveryCodes(ctx: AppContext, project: ProjectRecord, userId: string, proof: SecondFactorProof): Promise<string[]> {
  const factors = await ctx.db.read(userScope(project, userId), (db) => factorSummary(db, userId));
  if (!factors.totp && factors.passkeys === 0) throw MfaErrors.mfa_not_enrolled('No second factor is enrolled.');
  await checkSecondFactor(ctx, project, userId, proof);
  const { codes, hashes } = newRecoveryCodes(ctx.config.encryptionKey, 'app-user', userId);
  await ctx.db.tenant(userScope(project, userId), (tx) => replaceRecoveryCodes(tx, userId, project.id, hashes, ctx.clock.now()));
  return codes;
}
