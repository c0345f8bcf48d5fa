/**
 * How tokens reach clients (docs/wire-compatibility.md §2.2): the refresh token is always set as the HttpOnly
 * `refreshToken` cookie (Path=/api/userAuth; Secure + SameSite=None when the public URL is
 * https, else Lax); in header mode it is also in the `x-refresh-token` response header and in
 * the JSON body, where the SDK reads it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { ClientMeta, Tokens } from './sessions.js';

export const REFRESH_COOKIE = 'refreshToken';
const COOKIE_PATH = '/api/userAuth';

function cookieFlags(ctx: AppContext) {
  const secure = ctx.config.publicUrl.startsWith('https://');
  return { httpOnly: true, path: COOKIE_PATH, secure, sameSite: secure ? ('none' as const) : ('lax' as const) };
}

export function headerMode(req: FastifyRequest): boolean {
  return String(req.headers['x-refresh-token-mode'] ?? '').toLowerCase() === 'header';
}

export function setRefreshCookie(ctx: AppContext, reply: FastifyReply, token: string): void {
  reply.setCookie(REFRESH_COOKIE, token, { ...cookieFlags(ctx), maxAge: ctx.config.userRefreshTokenTtlSeconds });
}

export function clearRefreshCookie(ctx: AppContext, reply: FastifyReply): void {
  reply.clearCookie(REFRESH_COOKIE, cookieFlags(ctx));
}

/** The token fields of a response body; sets the cookie (always) and the header (header mode). */
export function deliverTokens(ctx: AppContext, reply: FastifyReply, tokens: Tokens, inHeader: boolean) {
  setRefreshCookie(ctx, reply, tokens.refreshToken);
  const body = { accessToken: tokens.accessToken, token: tokens.accessToken, expiresIn: tokens.expiresIn };
  if (!inHeader) return body;
  reply.header('x-refresh-token', tokens.refreshToken);
  return { ...body, refreshToken: tokens.refreshToken };
}

/** The presented refresh token: the cookie wins over the `x-refresh-token` header (as urBackend). */
export function presentedRefreshToken(req: FastifyRequest): { token?: string; fromHeader: boolean } {
  const cookie = req.cookies?.[REFRESH_COOKIE];
  const header = req.headers['x-refresh-token'];
  if (cookie) return { token: cookie, fromHeader: false };
  if (typeof header === 'string' && header.trim()) return { token: header.trim(), fromHeader: true };
  return { fromHeader: false };
}

export function clientMeta(req: FastifyRequest): ClientMeta {
  const ua = req.headers['user-agent'];
  const lang = req.headers['accept-language'];
  return { ip: req.ip ?? null, userAgent: typeof ua === 'string' ? ua.slice(0, 512) : null, acceptLanguage: typeof lang === 'string' ? lang.slice(0, 512) : null };
}
