/**
 * Dashboard session cookies. `accessToken` (15 min) and `refreshToken` (7 days, only sent to
 * /api/auth) are HttpOnly; `csrfToken` is readable by the dashboard's script, which echoes it
 * in `x-csrf-token` on cookie-authenticated mutations (double submit; see
 * modules/operators/auth.ts). Secure + SameSite=None in production, Lax otherwise.
 */
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { randomToken } from '../../lib/crypto.js';
import { assertCsrfToken } from './auth.js';
import type { IssuedSession } from './sessions.js';
import { noteSessionClient, OPERATOR_REFRESH_TTL_SECONDS } from './sessions.js';
import { OPERATOR_ACCESS_TTL_SECONDS } from './tokens.js';

export const REFRESH_COOKIE_PATH = '/api/auth';

function base(ctx: AppContext): CookieSerializeOptions {
  return ctx.config.production ? { secure: true, sameSite: 'none' } : { secure: false, sameSite: 'lax' };
}

/** Returns the CSRF token in force for this browser, setting the cookie when there is none. */
export function ensureCsrfCookie(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): string {
  const existing = req.cookies?.csrfToken;
  const token = existing && /^[A-Za-z0-9_-]{16,64}$/.test(existing) ? existing : randomToken(24);
  reply.setCookie('csrfToken', token, { ...base(ctx), path: '/', httpOnly: false, maxAge: OPERATOR_REFRESH_TTL_SECONDS });
  return token;
}

/** Sets the session's cookies, noting the request's client (address, User-Agent) for the sessions list first. */
export async function setSessionCookies(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, session: IssuedSession): Promise<void> {
  const ua = req.headers['user-agent'];
  await noteSessionClient(ctx, session, { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null });
  reply.setCookie('accessToken', session.accessToken, { ...base(ctx), path: '/', httpOnly: true, maxAge: OPERATOR_ACCESS_TTL_SECONDS });
  reply.setCookie('refreshToken', session.refreshToken, { ...base(ctx), path: REFRESH_COOKIE_PATH, httpOnly: true, maxAge: OPERATOR_REFRESH_TTL_SECONDS });
  ensureCsrfCookie(ctx, req, reply);
}

export function clearSessionCookies(ctx: AppContext, reply: FastifyReply): void {
  reply.clearCookie('accessToken', { ...base(ctx), path: '/', httpOnly: true });
  reply.clearCookie('refreshToken', { ...base(ctx), path: REFRESH_COOKIE_PATH, httpOnly: true });
}

/**
 * The refresh token of a request: the cookie (then CSRF-checked, since browsers send it by
 * themselves), else `refreshToken` in the JSON body or the `x-refresh-token` header.
 */
export function presentedRefreshToken(req: FastifyRequest): string | undefined {
  const cookie = req.cookies?.refreshToken;
  if (cookie) {
    assertCsrfToken(req);
    return cookie;
  }
  const body = req.body as { refreshToken?: unknown } | undefined;
  if (body && typeof body.refreshToken === 'string' && body.refreshToken) return body.refreshToken;
  const header = req.headers['x-refresh-token'];
  return typeof header === 'string' && header ? header : undefined;
}
