/**
 * Social sign-in: begin (state + PKCE, stored in PostgreSQL so any node can finish), finish
 * (state taken once, code exchanged, user found/linked/created, session started, rtCode
 * issued), and the rtCode exchange. Knows no HTTP.
 */
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../../context.js';
import { decrypt, encrypt, randomToken, safeEqual, sha256Hex } from '../../lib/crypto.js';
import { usersSchemaOf } from '../auth/schema.js';
import { discardSession, issueSession, startSession, type ClientMeta } from '../auth/sessions.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';
import type { ProjectRecord } from '../projects/cache.js';
import { signInWithProvider, type ProviderRef } from './accounts.js';
import { SocialErrors } from './errors.js';
import { githubProfile } from './github.js';
import { googleProfile } from './google.js';
import { authorizeUrl, credentialsOf, isProvider, type Credentials, type ProviderName, type SocialProfile } from './providers.js';
import { oidcRuntimeOf, type OidcRuntime } from './oidc-config.js';
import { oidcAuthorizeUrl, oidcProfile } from './oidc.js';
import { firstFactor } from '../../lib/identity/assurance.js';
import { openChallengeIfEnrolled, type OpenedChallenge } from '../mfa/challenge.js';
import { findLinkState, insertExchangeCode, insertState, takeExchangeCode, takeState } from './queries.js';

export const STATE_TTL_SECONDS = 600;
export const RT_CODE_TTL_SECONDS = 60;

/** The provider's credentials, or 422 when it is disabled or incomplete for the project. */
function requireCredentials(ctx: AppContext, project: ProjectRecord, p: ProviderName): Credentials {
  const creds = credentialsOf(ctx, project, p);
  if (!creds) throw SocialErrors.provider_not_configured(`${p} social auth is disabled or incomplete for this project.`);
  return creds;
}

export interface Begun {
  /** The provider's authorization URL. */
  url: string;
  state: string;
  /** Goes to the starting browser only (cookie.ts); its SHA-256 is stored with the state. */
  browserKey: string;
}

/** One of the project's OpenID Connect providers, or 422 when it is disabled or incomplete (404: no such id). */
function requireOidc(ctx: AppContext, project: ProjectRecord, id: string): OidcRuntime {
  const rt = oidcRuntimeOf(ctx, project, id);
  if (rt) return rt;
  const settings = project.settings.oidcProviders;
  const exists = !!settings && typeof settings === 'object' && Object.hasOwn(settings, id);
  if (!exists) throw SocialErrors.unsupported_provider();
  throw SocialErrors.provider_not_configured(`${id} sign-in is disabled or incomplete for this project.`);
}

/**
 * Creates the single-use state, bound to a key for the starting browser, or, for a link flow
 * (`linkUserId`, link.ts), to the signed-in guest it links to. `p`: 'github', 'google' or the
 * id of one of the project's OpenID Connect providers.
 */
export async function begin(ctx: AppContext, project: ProjectRecord, p: string, linkUserId: string | null = null): Promise<Begun> {
  const builtin = isProvider(p);
  const creds = builtin ? requireCredentials(ctx, project, p) : null;
  const oidc = builtin ? null : requireOidc(ctx, project, p);
  const state = oauth.generateRandomState();
  const browserKey = randomToken(32);
  const verifier = oauth.generateRandomCodeVerifier();
  const nonce = p === 'google' || oidc?.info.oidc ? oauth.generateRandomNonce() : null;
  const codeChallenge = await oauth.calculatePKCECodeChallenge(verifier);
  // The provider's address first: an unreachable issuer fails before a state is stored.
  const url = oidc
    ? await oidcAuthorizeUrl(ctx, oidc, { state, nonce, codeChallenge })
    : authorizeUrl(ctx, p as ProviderName, { clientId: creds!.clientId, state, codeChallenge, nonce });
  const now = ctx.clock.now();
  await ctx.db.read({ projectId: project.id, keyKind: 'publishable', account: true }, (tx) =>
    insertState(tx, {
      stateHash: sha256Hex(state),
      browserHash: linkUserId ? null : sha256Hex(browserKey),
      linkUserId,
      projectId: project.id,
      provider: p,
      codeVerifier: encrypt(ctx.config.encryptionKey, verifier),
      nonce,
      now,
      expiresAt: new Date(now.getTime() + STATE_TTL_SECONDS * 1000),
    }),
  );
  return { url, state, browserKey };
}

export interface PendingFlow {
  project: ProjectRecord;
  /** 'github', 'google' or an OpenID Connect provider's id. */
  provider: string;
  verifier: string;
  nonce: string | null;
  callbackUrl: string;
  /** Whether the callback came from the browser that started the flow (it holds the key). */
  sameBrowser: boolean;
}

/** A link flow's callback (link.ts): the browser goes back to the app, which finishes it with the user's token. */
export interface PendingLink {
  link: true;
  project: ProjectRecord;
  provider: string;
  callbackUrl: string;
}

const siteCallback = (project: ProjectRecord) => `${project.siteUrl!.replace(/\/+$/, '')}/auth/callback`;

/**
 * Takes a sign-in state out (single use). Unknown or expired → 400 (no callback URL is known
 * yet); whether the browser presented the state's key is for the caller to act on (an error
 * redirect). A link state stays for the app to finish (link.ts): only where to go is returned.
 */
export async function resume(ctx: AppContext, state: string, browserKey: string | undefined): Promise<PendingFlow | PendingLink> {
  const row = await takeState(ctx.db.admin, sha256Hex(state));
  if (!row) return resumeLink(ctx, state);
  if (row.expires_at <= ctx.clock.now()) throw SocialErrors.invalid_state();
  const project = await ctx.projects.byId(row.project_id);
  const verifier = decrypt(ctx.config.encryptionKey, row.code_verifier);
  if (!project || !verifier) throw SocialErrors.invalid_state();
  if (!project.siteUrl) throw SocialErrors.site_url_missing();
  const sameBrowser = browserKey !== undefined && row.browser_hash !== null && safeEqual(row.browser_hash, sha256Hex(browserKey));
  return { project, provider: row.provider, verifier, nonce: row.nonce, callbackUrl: siteCallback(project), sameBrowser };
}

async function resumeLink(ctx: AppContext, state: string): Promise<PendingLink> {
  const row = await findLinkState(ctx.db.admin, sha256Hex(state));
  if (!row || row.expires_at <= ctx.clock.now()) throw SocialErrors.invalid_state();
  const project = await ctx.projects.byId(row.project_id);
  if (!project) throw SocialErrors.invalid_state();
  if (!project.siteUrl) throw SocialErrors.site_url_missing();
  return { link: true, project, provider: row.provider, callbackUrl: siteCallback(project) };
}

/** The provider's answer to a finished authorization: who the person is (all errors are AppErrors or provider errors). */
export async function providerProfile(
  ctx: AppContext, project: ProjectRecord, provider: string, params: URLSearchParams, verifier: string, nonce: string | null,
): Promise<{ ref: ProviderRef; profile: SocialProfile }> {
  if (isProvider(provider)) {
    const creds = requireCredentials(ctx, project, provider);
    const profile = provider === 'github'
      ? await githubProfile(ctx, creds, params, verifier)
      : await googleProfile(ctx, creds, params, verifier, nonce ?? '');
    return { ref: provider, profile };
  }
  const rt = requireOidc(ctx, project, provider);
  const signIn = await oidcProfile(ctx, rt, params, verifier, nonce);
  return { ref: { id: provider, label: rt.setting.label, issuer: signIn.issuer }, profile: signIn.profile };
}

export interface Finished {
  accessToken: string;
  refreshToken: string;
  rtCode: string;
  userId: string;
  isNewUser: boolean;
  linkedByEmail: boolean;
  mfa?: undefined;
}

/** The provider step of a user with a second factor: a challenge, no tokens (src/modules/mfa/challenge.ts). */
export interface SecondFactorDue {
  mfa: OpenedChallenge;
  userId: string;
}

/** Exchanges the code, signs the user in and issues the rtCode (all errors are AppErrors or provider errors). */
export async function finish(ctx: AppContext, flow: PendingFlow, params: URLSearchParams, meta: ClientMeta): Promise<Finished | SecondFactorDue> {
  const { project, provider } = flow;
  const schema = await usersSchemaOf(ctx, project);
  const { ref, profile } = await providerProfile(ctx, project, provider, params, flow.verifier, flow.nonce);
  const rtCode = randomToken(32);
  const out = await signInWithProvider(ctx, project, schema, ref, profile, async (tx, r) => {
    const first = firstFactor('oauth', ctx.clock.now());
    const mfa = await openChallengeIfEnrolled(ctx, tx, project, r.user.id, first);
    if (mfa) return { mfa, userId: r.user.id };
    const started = await startSession(ctx, tx, project, r.user.id, meta, first);
    // a new user's sign-up is enqueued where it is created (accounts.ts)
    if (!r.isNewUser) await enqueueAuthHooks(ctx, tx, project.id, 'sign-in', r.user, typeof provider === 'string' ? 'social' : 'oidc');
    return { started, user: r.user, isNewUser: r.isNewUser, linkedByEmail: r.linkedByEmail };
  });
  if (out.mfa) return { mfa: out.mfa, userId: out.userId };
  // The tokens after the commit (the token-claims function runs outside the transaction), then
  // the exchange code that carries them, in one autocommit statement.
  const tokens = await issueSession(ctx, project, out.started, { user: out.user });
  const code = {
    codeHash: sha256Hex(rtCode),
    projectId: project.id,
    userId: out.user.id,
    accessTokenHash: sha256Hex(tokens.accessToken),
    refreshToken: encrypt(ctx.config.encryptionKey, tokens.refreshToken),
    expiresAt: new Date(ctx.clock.now().getTime() + RT_CODE_TTL_SECONDS * 1000),
  };
  try {
    await ctx.db.read({ projectId: project.id, userId: out.user.id, keyKind: 'publishable', account: true }, (db) => insertExchangeCode(db, code));
  } catch (err) {
    await discardSession(ctx, project, out.started);
    throw err;
  }
  return { ...tokens, rtCode, userId: out.user.id, isNewUser: out.isNewUser, linkedByEmail: out.linkedByEmail };
}

/** rtCode → refresh token, once, within 60 s, for the project that issued it, with its access token. */
export async function exchange(ctx: AppContext, project: ProjectRecord, token: string, rtCode: string): Promise<string> {
  // One DELETE … RETURNING: autocommit, no transaction needed. The code is gone whatever follows.
  const row = await ctx.db.read({ projectId: project.id, keyKind: 'publishable', account: true }, (tx) => takeExchangeCode(tx, sha256Hex(rtCode)));
  if (!row || row.expires_at <= ctx.clock.now()) throw SocialErrors.exchange_invalid();
  if (!safeEqual(row.access_token_hash, sha256Hex(token))) throw SocialErrors.exchange_mismatch();
  const refreshToken = decrypt(ctx.config.encryptionKey, row.refresh_token);
  if (!refreshToken) throw SocialErrors.exchange_invalid();
  return refreshToken;
}
