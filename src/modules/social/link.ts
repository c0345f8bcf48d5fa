/**
 * A guest links a social or OpenID Connect identity to its own user id (docs/auth.md
 * "Anonymous users"), keeping its documents and files. Knows no HTTP.
 *
 * 1. `beginLink` (the guest's access token): a state like a sign-in's, but bound to the guest
 *    (`social_states.link_user_id`) instead of a browser cookie; returns the provider's URL,
 *    which the app opens.
 * 2. The provider's callback (routes/callback.ts) sees a link state and takes nothing: it sends
 *    the browser back to `<siteUrl>/auth/callback?link=<provider>&state=…&code=…`.
 * 3. `finishLink` (the app, with the same guest's access token): takes the state out (single
 *    use, only in the API key's project), checks that it was started by this very user, then
 *    exchanges the code (PKCE and, for OpenID Connect, the ID token checks of sign-in) and
 *    attaches the identity (accounts.ts `linkToGuest`).
 *
 * Why the app finishes it, not the callback: the callback cannot tell which browser arrives (an
 * API call cannot give the browser a first-party cookie), and attaching there would let anyone
 * who gets a victim to open a provider URL carrying the attacker's state link the victim's
 * identity to the attacker's guest (account-linking CSRF). A state presented by another user,
 * in another project or after it was spent is refused; the provider's code is worthless
 * without the PKCE verifier, which never leaves the server.
 */
import type { AppContext } from '../../context.js';
import { decrypt, sha256Hex } from '../../lib/crypto.js';
import { AuthErrors } from '../auth/errors.js';
import { findUserById, type UserRow } from '../auth/queries.js';
import { accessTokenFor } from '../auth/sessions.js';
import type { UserTokenClaims } from '../auth/tokens.js';
import type { ProjectRecord } from '../projects/cache.js';
import { linkToGuest } from './accounts.js';
import { SocialErrors } from './errors.js';
import { takeLinkState } from './queries.js';
import { begin, providerProfile } from './service.js';

const scope = (project: ProjectRecord, userId: string) => ({ projectId: project.id, userId, keyKind: 'publishable' as const, account: true });

/** The provider's authorization URL for a link to the signed-in guest; 409 user_not_anonymous for anyone else, 403 for a disabled guest. */
export async function beginLink(ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, provider: string): Promise<string> {
  if (!project.siteUrl) throw SocialErrors.site_url_missing();
  const user = await ctx.db.read(scope(project, caller.userId), (db) => findUserById(db, caller.userId));
  if (!user) throw AuthErrors.user_not_found();
  if (user.disabled_at) throw AuthErrors.user_disabled();
  if (!user.is_anonymous) throw AuthErrors.user_not_anonymous('Only a guest (anonymous) account can link an identity this way.');
  const { url } = await begin(ctx, project, provider, user.id);
  return url;
}

export interface Linked {
  user: UserRow;
  /** A fresh access token of the caller's session (`isAnonymous: false`); null for a token without a session id. */
  accessToken: string | null;
}

/** Finishes a link the caller started: `params` are what the provider sent back (code, state, iss, user). */
export async function finishLink(
  ctx: AppContext, project: ProjectRecord, caller: UserTokenClaims, provider: string, params: URLSearchParams,
): Promise<Linked> {
  const state = params.get('state') ?? '';
  // Spent by whoever presents it: a state shown to the wrong user is gone for good.
  const row = await ctx.db.read(scope(project, caller.userId), (db) => takeLinkState(db, sha256Hex(state)));
  if (!row || row.expires_at <= ctx.clock.now() || row.provider !== provider) throw SocialErrors.invalid_state();
  if (row.link_user_id !== caller.userId) throw SocialErrors.link_state_mismatch();
  const verifier = decrypt(ctx.config.encryptionKey, row.code_verifier);
  if (!verifier) throw SocialErrors.invalid_state();
  const { ref, profile } = await providerProfile(ctx, project, provider, params, verifier, row.nonce);
  const user = await linkToGuest(ctx, project, caller.userId, ref, profile);
  const accessToken = caller.sid ? await accessTokenFor(ctx, project, user.id, { sid: caller.sid, aal: caller.aal, amr: caller.amr, anonymous: false }) : null;
  return { user, accessToken };
}
