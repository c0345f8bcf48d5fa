/**
 * GitHub sign-in at the console (public: the state is the credential; github.ts). The browser
 * goes to /start, to GitHub, and back to /callback, which sends it to the console: signed in
 * (`/_/#/projects`), at the second step (`/_/#/login?challengeId=…&methods=…`, in the fragment,
 * which no server sees), or with an error code (`/_/#/login?error=<code>`, the catalogue's).
 */
import { Type } from '@sinclair/typebox';
import * as oauth from 'oauth4webapi';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { ok } from '../../../lib/envelope.js';
import { AppError } from '../../../lib/errors.js';
import { setBrowserCookie, takeBrowserKey } from '../../social/cookie.js';
import { setSessionCookies } from '../cookies.js';
import { OperatorErrors } from '../errors.js';
import { beginOperatorGithub, finishOperatorGithub, finishOperatorGithubLink, GITHUB_PATH, githubSignInEnabled, takeOperatorGithubState } from '../github.js';
import { limitAuthAttempts } from '../limits.js';
import { envelopeOf } from '../schemas.js';

const TAGS = ['dashboard: auth'];

const Query = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 1024 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
});

/** The console at `#/<route>?<query>` (DASHBOARD_URL's /_/). */
function toConsole(ctx: AppContext, reply: FastifyReply, route: string, query: Record<string, string> = {}) {
  const qs = new URLSearchParams(query).toString();
  const url = `${ctx.config.dashboardUrl}/_/#/${route}${qs ? `?${qs}` : ''}`;
  return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(url, 302);
}

/** Our catalogue's code for a failure; anything else (GitHub unreachable, a protocol error) is logged without secrets and named generically. */
function codeOf(req: FastifyRequest, err: unknown): string {
  if (err instanceof AppError) return err.code;
  const protocol = err instanceof oauth.OperationProcessingError || err instanceof oauth.ResponseBodyError || err instanceof oauth.AuthorizationResponseError;
  req.log.warn({ err: { name: (err as Error)?.name, message: (err as Error)?.message }, protocol }, 'operator GitHub sign-in failed');
  return OperatorErrors.github_sign_in_failed().code;
}

export default async function operatorGithubRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(GITHUB_PATH, {
    schema: { tags: TAGS, summary: 'Whether the console offers "Sign in with GitHub" (OPERATOR_GITHUB_CLIENT_ID set)', response: { 200: envelopeOf(Type.Object({ enabled: Type.Boolean() })) } },
    handler: async () => ok({ enabled: githubSignInEnabled(ctx) }),
  });

  app.get(`${GITHUB_PATH}/start`, {
    schema: { tags: TAGS, summary: 'Start GitHub sign-in: 302 to GitHub with a single-use state (bound to this browser by a cookie) and PKCE' },
    handler: async (req, reply) => {
      try {
        await limitAuthAttempts(ctx, req.ip);
        const { url, state, browserKey } = await beginOperatorGithub(ctx);
        setBrowserCookie(ctx, reply, state, browserKey, GITHUB_PATH);
        return reply.header('cache-control', 'no-store').redirect(url, 302);
      } catch (err) {
        return toConsole(ctx, reply, 'login', { error: codeOf(req, err) });
      }
    },
  });

  app.get(`${GITHUB_PATH}/callback`, {
    schema: { tags: TAGS, summary: 'GitHub sends the browser back here (register it as the OAuth app\'s callback); 302 to the console', querystring: Query },
    handler: async (req, reply) => {
      const q = req.query;
      // Where the console shows the outcome: the Account screen for a flow started there (linking).
      let screen = 'login';
      try {
        if (!q.state) throw OperatorErrors.github_state_invalid();
        // The state is spent first, whatever follows: a callback URL works once, in the browser that started it.
        const { verifier, linkOperatorId } = await takeOperatorGithubState(ctx, q.state, takeBrowserKey(ctx, req, reply, q.state, GITHUB_PATH));
        if (linkOperatorId) screen = 'account';
        if (q.error || !q.code) throw OperatorErrors.github_denied();
        const params = new URLSearchParams({ code: q.code, state: q.state });
        if (q.iss) params.set('iss', q.iss);
        if (linkOperatorId) {
          await finishOperatorGithubLink(ctx, verifier, params, linkOperatorId);
          return toConsole(ctx, reply, 'account', { linked: 'github' });
        }
        const out = await finishOperatorGithub(ctx, verifier, params);
        if ('challenge' in out) return toConsole(ctx, reply, 'login', { challengeId: out.challenge.challengeId, methods: out.challenge.methods.join(',') });
        await setSessionCookies(ctx, req, reply, out.session);
        return toConsole(ctx, reply, 'projects', out.created ? { welcome: 'github' } : {});
      } catch (err) {
        return toConsole(ctx, reply, screen, { error: codeOf(req, err) });
      }
    },
  });
}
