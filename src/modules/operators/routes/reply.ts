/** The one shape every session-issuing route answers with (login, refresh, verify-otp, change-password). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { setSessionCookies } from '../cookies.js';
import type { LoggedIn } from '../service.js';

/**
 * Sets the cookies and builds the body. Browsers use the cookies; scripts use `token` as a
 * Bearer and get the refresh token in the body (and `x-refresh-token`) when they ask for it
 * with `x-refresh-token-mode: header`, as end-user logins do.
 */
export async function sessionReply(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, { user, session }: LoggedIn, message: string) {
  await setSessionCookies(ctx, req, reply, session);
  const headerMode = req.headers['x-refresh-token-mode'] === 'header' || typeof req.headers['x-refresh-token'] === 'string';
  if (headerMode) reply.header('x-refresh-token', session.refreshToken);
  return ok(
    {
      token: session.accessToken,
      accessToken: session.accessToken,
      expiresIn: session.expiresIn,
      ...(headerMode ? { refreshToken: session.refreshToken } : {}),
      user,
    },
    message,
  );
}
