/**
 * "Sign in with GitHub" at the console (docs/operators-and-projects.md "GitHub sign-in"), with
 * the platform's own GitHub OAuth app (OPERATOR_GITHUB_CLIENT_ID / _SECRET). The OAuth steps are
 * the end users' (src/modules/social: the authorization URL, PKCE S256 and the code exchange with
 * oauth4webapi, the verified primary email from /user/emails, the browser-binding cookie); here:
 * a single-use state bound to the starting browser, then the operator: the one linked to the
 * GitHub account, else the one with the verified email (linked now), else a new account
 * (sign-up at the console is open, as POST /api/auth/register is). An operator with a second
 * factor gets the same challenge as after a password, and no session.
 */
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../../context.js';
import { decrypt, encrypt, randomToken, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { firstFactor } from '../../lib/identity/assurance.js';
import { hashPassword } from '../../lib/passwords.js';
import { githubProfile } from '../social/github.js';
import { authorizeUrl, type Credentials, type SocialProfile } from '../social/providers.js';
import { OperatorErrors } from './errors.js';
import { allowGithubLinkByEmail, findOperatorByIdentity, githubLinkByEmail, insertOperatorOauthState, linkOperatorIdentity, takeOperatorOauthState } from './github-queries.js';
import { openOperatorChallenge } from './mfa.js';
import { findOperatorByEmail, insertOperator, updateOperator } from './queries.js';
import { issueSession, type IssuedSession } from './sessions.js';

export const GITHUB_PATH = '/api/auth/github';
const STATE_TTL_SECONDS = 600;

const callbackUrl = (ctx: AppContext) => `${ctx.config.publicUrl}${GITHUB_PATH}/callback`;

export const githubSignInEnabled = (ctx: AppContext): boolean => !!ctx.config.operatorGithub;

function credentials(ctx: AppContext): Credentials {
  const c = ctx.config.operatorGithub;
  if (!c) throw OperatorErrors.github_not_configured();
  return c;
}

/**
 * The GitHub authorization URL with a fresh state and PKCE challenge; `browserKey` goes to the
 * starting browser only. With `linkOperatorId` (the Account screen, signed in) the flow links
 * the GitHub account to that operator instead of signing in.
 */
export async function beginOperatorGithub(ctx: AppContext, linkOperatorId: string | null = null): Promise<{ url: string; state: string; browserKey: string }> {
  const creds = credentials(ctx);
  const state = oauth.generateRandomState();
  const browserKey = randomToken(32);
  const verifier = oauth.generateRandomCodeVerifier();
  const codeChallenge = await oauth.calculatePKCECodeChallenge(verifier);
  const url = authorizeUrl(ctx, 'github', { clientId: creds.clientId, state, codeChallenge, nonce: null, redirectUri: callbackUrl(ctx) });
  const now = ctx.clock.now();
  await insertOperatorOauthState(ctx.db.admin, {
    stateHash: sha256Hex(state),
    browserHash: sha256Hex(browserKey),
    codeVerifier: encrypt(ctx.config.encryptionKey, verifier),
    now,
    expiresAt: new Date(now.getTime() + STATE_TTL_SECONDS * 1000),
    linkOperatorId,
  });
  return { url, state, browserKey };
}

/**
 * Takes the state out (single use, whatever follows) and checks it was started by this browser
 * (it holds the key: against login CSRF) and is live; the PKCE verifier.
 */
export async function takeOperatorGithubState(ctx: AppContext, state: string, browserKey: string | undefined): Promise<{ verifier: string; linkOperatorId: string | null }> {
  const row = await takeOperatorOauthState(ctx.db.admin, sha256Hex(state));
  if (!row || row.expires_at <= ctx.clock.now()) throw OperatorErrors.github_state_invalid();
  if (browserKey === undefined || !safeEqual(row.browser_hash, sha256Hex(browserKey))) throw OperatorErrors.github_state_invalid();
  const verifier = decrypt(ctx.config.encryptionKey, row.code_verifier);
  if (!verifier) throw OperatorErrors.github_state_invalid();
  return { verifier, linkOperatorId: row.link_operator_id };
}

export type GithubSignIn =
  | { operatorId: string; session: IssuedSession; created: boolean }
  | { operatorId: string; challenge: NonNullable<Awaited<ReturnType<typeof openOperatorChallenge>>> };

/** The operator of a verified GitHub profile: linked, else by email (linked now), else new. */
async function operatorFor(ctx: AppContext, profile: SocialProfile & { email: string }): Promise<{ id: string; created: boolean }> {
  const db = ctx.db.admin;
  const now = ctx.clock.now();
  const identity = { provider: 'github' as const, subject: profile.providerId, email: profile.email, now };
  const linked = await findOperatorByIdentity(db, 'github', profile.providerId);
  if (linked) {
    await linkOperatorIdentity(db, { ...identity, operatorId: linked.operator_id });
    return { id: linked.operator_id, created: false };
  }
  let row = await findOperatorByEmail(db, profile.email);
  let created = false;
  // The operator unlinked GitHub: the same address must not link it again behind their back.
  if (row && !(await githubLinkByEmail(db, row.id))) throw OperatorErrors.github_unlinked();
  if (!row) {
    // No password anyone knows: the operator signs in with GitHub (or sets one by forgot-password).
    row = await insertOperator(db, { email: profile.email, passwordHash: await hashPassword(randomToken(32)), name: profile.name?.slice(0, 100) ?? null, verified: true, now });
    created = row !== undefined;
    row ??= await findOperatorByEmail(db, profile.email); // registered at the same moment
    if (!row) throw OperatorErrors.github_sign_in_failed();
  }
  if (!(await linkOperatorIdentity(db, { ...identity, operatorId: row.id }))) throw OperatorErrors.github_linked_elsewhere();
  // GitHub verified the mailbox: as a reset by mailed code does, that verifies the account's email.
  if (!row.is_verified) await updateOperator(db, row.id, { is_verified: true }, now);
  ctx.log.info({ audit: created ? 'operator.github.signed_up' : 'operator.github.linked', operatorId: row.id }, `audit: an operator ${created ? 'signed up' : 'linked GitHub'} with GitHub`);
  return { id: row.id, created };
}

/**
 * Exchanges the code (PKCE) and links the GitHub account to the signed-in operator who started
 * the flow from the Account screen (any address: the link is by GitHub's user id). A GitHub
 * account linked to another operator, or an operator linked to another GitHub account, is refused.
 */
export async function finishOperatorGithubLink(ctx: AppContext, verifier: string, params: URLSearchParams, operatorId: string): Promise<void> {
  const profile = await githubProfile(ctx, credentials(ctx), params, verifier, callbackUrl(ctx));
  const db = ctx.db.admin;
  const holder = await findOperatorByIdentity(db, 'github', profile.providerId);
  if (holder && holder.operator_id !== operatorId) throw OperatorErrors.github_identity_taken();
  const now = ctx.clock.now();
  if (!(await linkOperatorIdentity(db, { provider: 'github', subject: profile.providerId, operatorId, email: profile.email ?? null, now }))) throw OperatorErrors.github_already_linked();
  await allowGithubLinkByEmail(db, operatorId);
  ctx.log.info({ audit: 'operator.github.linked', operatorId }, 'audit: an operator linked GitHub from their account');
}

/** Exchanges the code (PKCE) and signs the operator in, or opens their second-factor challenge. */
export async function finishOperatorGithub(ctx: AppContext, verifier: string, params: URLSearchParams): Promise<GithubSignIn> {
  const profile = await githubProfile(ctx, credentials(ctx), params, verifier, callbackUrl(ctx));
  if (!profile.email || !profile.emailVerified) throw OperatorErrors.github_email_unverified();
  const { id, created } = await operatorFor(ctx, { ...profile, email: profile.email });
  const first = firstFactor('oauth', ctx.clock.now());
  const challenge = await openOperatorChallenge(ctx, id, first.amr);
  if (challenge) return { operatorId: id, challenge };
  return { operatorId: id, session: await issueSession(ctx, id, undefined, first), created };
}
