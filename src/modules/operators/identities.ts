/**
 * The accounts at identity providers linked to an operator's (docs/operators-and-projects.md
 * "GitHub sign-in"): listed on the Account screen, and unlinked there. Unlinking ends sign-in
 * with that provider only: the sessions it opened stay (revoke them under Sessions), and the
 * account's verified email still resets its password, so unlinking never locks anyone out.
 */
import type { AppContext } from '../../context.js';
import { requireAal2IfEnrolled } from './auth.js';
import { OperatorErrors } from './errors.js';
import { operatorIdentitiesOf, unlinkOperatorIdentity } from './github-queries.js';
import type { OperatorIdentity } from './identity.js';

export type IdentityProvider = 'github';

export async function listOperatorIdentities(ctx: AppContext, operator: OperatorIdentity) {
  const rows = await operatorIdentitiesOf(ctx.db.admin, operator.id);
  return rows.map((r) => ({
    provider: r.provider,
    email: r.email,
    linkedAt: new Date(r.created_at).toISOString(),
    lastSignInAt: new Date(r.last_sign_in_at).toISOString(),
  }));
}

/** 404 `identity_not_found` when none is linked; an operator with a second factor must be in an aal2 session. */
export async function unlinkIdentity(ctx: AppContext, operator: OperatorIdentity, provider: IdentityProvider): Promise<void> {
  requireAal2IfEnrolled(operator);
  const n = await unlinkOperatorIdentity(ctx.db.admin, operator.id, provider);
  if (n === 0) throw OperatorErrors.identity_not_found();
  ctx.log.info({ audit: 'operator.identity.unlinked', operatorId: operator.id, provider }, 'audit: an operator unlinked a sign-in provider');
}
