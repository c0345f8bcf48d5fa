/**
 * The OAuth state is bound to the browser that started the flow (against login CSRF: an
 * attacker who starts a flow, consents with their own provider account and hands the victim
 * the callback URL would otherwise sign the victim into the attacker's account). /start sets
 * a short-lived HttpOnly cookie holding a random key whose SHA-256 is stored with the state
 * (so any API node can check it); the callback refuses a state without its cookie.
 * The cookie is named after the state, so several flows in flight (tabs) do not clobber each
 * other. SameSite=Lax: the provider's redirect back is a top-level GET, which Lax cookies
 * follow; the flow never needs the cookie on a cross-site subrequest.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { sha256Hex } from '../../lib/crypto.js';
import { STATE_TTL_SECONDS } from './service.js';

const COOKIE_PATH = '/api/userAuth/social';

const cookieName = (state: string) => `oauth_${sha256Hex(`cookie:${state}`).slice(0, 16)}`;

function flags(ctx: AppContext, path: string) {
  return { httpOnly: true, path, sameSite: 'lax' as const, secure: ctx.config.publicUrl.startsWith('https://') };
}

/** `path`: where the flow's callback is (a project's social callbacks by default; the console's GitHub sign-in has its own). */
export function setBrowserCookie(ctx: AppContext, reply: FastifyReply, state: string, browserKey: string, path = COOKIE_PATH): void {
  reply.setCookie(cookieName(state), browserKey, { ...flags(ctx, path), maxAge: STATE_TTL_SECONDS });
}

/** The key the browser holds for this state (if any); the cookie is cleared either way. */
export function takeBrowserKey(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, state: string, path = COOKIE_PATH): string | undefined {
  const name = cookieName(state);
  const value = req.cookies?.[name];
  if (value !== undefined) reply.clearCookie(name, flags(ctx, path));
  return value || undefined;
}
