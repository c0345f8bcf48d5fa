/**
 * Claiming an account whose email was never verified (docs/auth.md, pre-account takeover): a
 * sign-in has just proven the mailbox (a provider's verified email, a magic link or an email
 * code), and whoever created the account without proving it must lose every way back in. One
 * implementation for social sign-in (src/modules/social/accounts.ts) and passwordless sign-in
 * (passwordless.ts): the password becomes an unusable one, every refresh session is revoked,
 * and the email counts as verified. The owner sets a password by reset if they want one.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { randomPasswordHash } from '../../lib/passwords.js';
import { markEmailVerified, setPasswordHash, type UserRow } from './queries.js';
import { revokeUserSessions } from './session-queries.js';

/** The account as it is after the claim (unchanged when its email was already verified), in `tx`. */
export async function claimUnverified(ctx: AppContext, tx: Tx, user: UserRow): Promise<UserRow> {
  if (user.email_verified) return user;
  const now = ctx.clock.now();
  await setPasswordHash(tx, user.id, await randomPasswordHash(), now);
  await revokeUserSessions(tx, user.id, now);
  await markEmailVerified(tx, user.id, now);
  return { ...user, email_verified: true };
}
