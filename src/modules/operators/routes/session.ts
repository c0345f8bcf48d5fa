/** Session routes: refresh-token (rotate), logout, csrf-token (public); me (operator). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { done, ok } from '../../../lib/envelope.js';
import { operatorOf } from '../auth.js';
import type { App } from '../../../app.js';
import { clearSessionCookies, ensureCsrfCookie, presentedRefreshToken } from '../cookies.js';
import { OperatorErrors } from '../errors.js';
import { envelopeOf, MessageEnvelope, OperatorUser, SessionEnvelope } from '../schemas.js';
import { loadOperator } from '../service.js';
import { endSession, rotateSession } from '../sessions.js';
import { sessionReply } from './reply.js';

// No body schema: the body is optional (browsers send only the cookie), and an absent body
// fails any object schema. cookies.ts reads `refreshToken` from it with a type check.
const REFRESH_DESCRIPTION = 'The refresh token comes from the refreshToken cookie (then x-csrf-token is required), a JSON body {refreshToken}, or the x-refresh-token header.';
const TAGS = ['dashboard: auth'];

export default async function sessionRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/auth/refresh-token',
    { schema: { tags: TAGS, summary: 'Rotate the refresh token for a new session', description: REFRESH_DESCRIPTION, response: { 200: SessionEnvelope } } },
    async (req, reply) => {
      const raw = presentedRefreshToken(req);
      if (!raw) throw OperatorErrors.no_refresh_token();
      await ctx.limits.enforce(`operator:refresh:${req.ip}`, 60, 60);
      try {
        const { operatorId, session } = await rotateSession(ctx, raw);
        return await sessionReply(ctx, req, reply, { user: await loadOperator(ctx, operatorId), session }, 'Token refreshed');
      } catch (err) {
        clearSessionCookies(ctx, reply);
        throw err;
      }
    },
  );

  app.post(
    '/api/auth/logout',
    { schema: { tags: TAGS, summary: 'End the session (always succeeds)', description: REFRESH_DESCRIPTION, response: { 200: MessageEnvelope } } },
    async (req, reply) => {
      const raw = presentedRefreshToken(req);
      if (raw) await endSession(ctx, raw);
      clearSessionCookies(ctx, reply);
      return done('Logged out successfully');
    },
  );

  app.get(
    '/api/auth/csrf-token',
    {
      schema: {
        tags: TAGS,
        summary: 'The CSRF token to echo in x-csrf-token on cookie-authenticated mutations',
        response: { 200: Type.Object({ success: Type.Boolean(), data: Type.Object({ csrfToken: Type.String() }), message: Type.String(), csrfToken: Type.String() }) },
      },
    },
    async (req, reply) => {
      const csrfToken = ensureCsrfCookie(ctx, req, reply);
      // Top-level copy too: urBackend's dashboard reads `{csrfToken}`.
      return { ...ok({ csrfToken }), csrfToken };
    },
  );
}

/** GET /api/auth/me (operator group). */
export async function meRoute(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/auth/me',
    { config: { belowAal2: true }, schema: { tags: TAGS, summary: 'The signed-in operator', response: { 200: envelopeOf(Type.Object({ user: OperatorUser })) } } },
    async (req) => ok({ user: await loadOperator(ctx, operatorOf(req).id) }),
  );
}
