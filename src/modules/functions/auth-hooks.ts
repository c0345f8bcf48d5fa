/**
 * The synchronous auth hooks (docs/functions.md "Auth hooks"): a project's `before-sign-up`
 * function, run before a new end user is written, and its `token-claims` function, run when an
 * access token is issued. At most one of each per project (service.ts).
 *
 * - Cost without hooks: one look-up in the node's registry (cached per project, no query) and a
 *   scan of the project's functions; nothing is allocated for the answer.
 * - Bounded: an auth function gets 1 s of CPU and 5 s of wall time (limits.ts). A hook that
 *   fails (a limit, a crash, an error without a 4xx status, an answer of the wrong shape) fails
 *   the sign-up or the token closed: never a hang, never a user let in without the hook.
 * - A hook refuses with `throw new PlinthError(message, { status: 4xx, code })`: the client gets
 *   that status, code and message.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { FunctionErrors } from './errors.js';
import type { FunctionCaller } from './host.js';
import type { ActiveFunctionRow } from './queries.js';
import { failureError, runFunction } from './runner.js';
import { isClaimName, MAX_CLAIM_NAME_CHARS } from '../../lib/claim-names.js';

export type AuthHookEvent = 'before-sign-up' | 'token-claims';

/** The project's enabled hook for `event`, or null: no allocation, no query once the project's functions are cached. */
export async function authHook(ctx: AppContext, projectId: string, event: AuthHookEvent): Promise<ActiveFunctionRow | null> {
  const { all } = await ctx.functions.registry.get(projectId);
  for (let i = 0; i < all.length; i++) {
    const f = all[i]!;
    if (f.kind === 'auth' && f.enabled && f.trigger.event === event) return f;
  }
  return null;
}

/** Runs an auth hook; its value, or the error the client sees (fail closed). */
async function runAuthHook(ctx: AppContext, projectId: string, fn: ActiveFunctionRow, event: unknown, caller: FunctionCaller): Promise<unknown> {
  let outcome;
  try {
    outcome = await runFunction(ctx, { projectId, fn, trigger: `auth.${String(fn.trigger.event)}`, event, caller });
  } catch (err) {
    if (err instanceof AppError) throw err;
    ctx.log.error({ err, projectId, function: fn.name }, 'auth hook could not be run');
    throw FunctionErrors.function_unavailable();
  }
  if (!outcome.ok) throw failureError(outcome.failure, [400, 499]);
  return outcome.value;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** What a sign-up is, as the before-sign-up hook sees it. */
export interface SignUpEvent {
  /** 'password', 'magic-link', 'code', 'anonymous', 'link-email' (a guest gets an email), 'social' (GitHub, Google), 'oidc'. */
  method: string;
  email: string | null;
  /** The profile fields the new user would get. */
  data: Record<string, unknown>;
  /** 'github', 'google' or the OpenID Connect provider's id. */
  provider?: string;
  /** For 'link-email': the guest's id. */
  userId?: string;
}

/**
 * Runs the project's before-sign-up hook when it has one. Returns null without a hook or when
 * the hook accepts as is; the fields it returned (`{ data }`) otherwise, not yet validated
 * (users.ts hookUserData does that against the users schema). Throws the hook's refusal.
 */
export async function beforeSignUp(ctx: AppContext, projectId: string, event: SignUpEvent): Promise<Record<string, unknown> | null> {
  const fn = await authHook(ctx, projectId, 'before-sign-up');
  if (!fn) return null;
  const value = await runAuthHook(ctx, projectId, fn, event, { keyKind: 'publishable', userId: null });
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw FunctionErrors.function_result_invalid('A before-sign-up function returns nothing, or { data: {...} }.');
  if (value.data === undefined || value.data === null) return null;
  if (!isPlainObject(value.data)) throw FunctionErrors.function_result_invalid('The data a before-sign-up function returns must be an object.');
  return value.data;
}

export const MAX_CLAIMS_BYTES = 4096;

/** The user as the token-claims hook sees it. */
export interface ClaimsUser {
  id: string;
  email: string | null;
  isAnonymous: boolean;
  emailVerified: boolean;
  [field: string]: unknown;
}

/**
 * Runs the token-claims hook `fn` for `user`: the claims to put in the access token under
 * `claims`, or null. The hook acts as the user (plinth.data under their access rules).
 */
export async function tokenClaims(ctx: AppContext, projectId: string, fn: ActiveFunctionRow, user: ClaimsUser, method: string | undefined): Promise<Record<string, unknown> | null> {
  const value = await runAuthHook(ctx, projectId, fn, { user, method }, { keyKind: 'publishable', userId: user.id });
  if (value === undefined || value === null) return null;
  if (!isPlainObject(value)) throw FunctionErrors.function_result_invalid('A token-claims function returns nothing, or { claims: {...} }.');
  const claims = value.claims;
  if (claims === undefined || claims === null) return null;
  if (!isPlainObject(claims)) throw FunctionErrors.function_result_invalid('The claims a token-claims function returns must be an object.');
  for (const k of Object.keys(claims)) {
    if (!isClaimName(k)) throw FunctionErrors.function_result_invalid(`'${k.slice(0, MAX_CLAIM_NAME_CHARS)}' cannot be a claim name.`);
  }
  const text = JSON.stringify(claims);
  // PostgreSQL's jsonb holds no \u0000: such claims could not reach access rules (tokens.ts).
  if (text.includes('\\u0000')) throw FunctionErrors.function_result_invalid('A claim cannot contain the character U+0000.');
  const size = Buffer.byteLength(text);
  if (size > MAX_CLAIMS_BYTES) throw FunctionErrors.function_result_invalid(`The claims are ${size} bytes; at most ${MAX_CLAIMS_BYTES}.`);
  return claims;
}
