/**
 * GET /api/userAuth/social/:provider/callback: the provider sends the browser back here. On
 * success → 302 to `<siteUrl>/auth/callback?rtCode&provider&projectId&userId&isNewUser&linkedByEmail#token=…`
 * (the refresh token never appears in a URL); after the state is known every failure is a
 * redirect with `?error=`; before that, JSON 400. A guest's link flow (../link.ts) goes back
 * to `<siteUrl>/auth/callback?link=<provider>&projectId&state&code[&iss][&user]` untouched,
 * for the app to finish with the guest's token.
 */
import { Type, type Static } from '@sinclair/typebox';
import * as oauth from 'oauth4webapi';
import type { FastifyReply } from 'fastify';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { AppError } from '../../../lib/errors.js';
import { clientMeta, setRefreshCookie } from '../../auth/delivery.js';
import { SocialErrors } from '../errors.js';
import { takeBrowserKey } from '../cookie.js';
import { isProviderName } from '../providers.js';
import { finish, resume, type Finished, type PendingFlow, type PendingLink, type SecondFactorDue } from '../service.js';

const Query = Type.Object({
  code: Type.Optional(Type.String({ maxLength: 2048 })),
  state: Type.Optional(Type.String({ maxLength: 512 })),
  error: Type.Optional(Type.String({ maxLength: 1024 })),
  error_description: Type.Optional(Type.String({ maxLength: 2048 })),
  /** RFC 9207: the issuer of the authorization response, checked by oauth4webapi when the provider sends it. */
  iss: Type.Optional(Type.String({ maxLength: 2048 })),
  /** Apple, on the first consent only: the person's name as JSON (form_post). */
  user: Type.Optional(Type.String({ maxLength: 2048 })),
});

function redirectError(reply: FastifyReply, flow: PendingFlow | PendingLink, message: string) {
  const url = new URL(flow.callbackUrl);
  if ('link' in flow) url.searchParams.set('link', flow.provider);
  url.searchParams.set('error', message);
  return reply.header('cache-control', 'no-store').redirect(url.toString(), 302);
}

function successUrl(flow: PendingFlow, r: Finished): string {
  const url = new URL(flow.callbackUrl);
  url.searchParams.set('rtCode', r.rtCode);
  url.searchParams.set('provider', flow.provider);
  url.searchParams.set('projectId', flow.project.id);
  url.searchParams.set('userId', r.userId);
  url.searchParams.set('isNewUser', String(r.isNewUser));
  url.searchParams.set('linkedByEmail', String(r.linkedByEmail));
  url.hash = `token=${encodeURIComponent(r.accessToken)}`;
  return url.toString();
}

/** A user with a second factor: the challenge to complete (POST /api/userAuth/mfa/verify), no tokens. */
function challengeUrl(flow: PendingFlow, r: SecondFactorDue): string {
  const url = new URL(flow.callbackUrl);
  url.searchParams.set('mfaRequired', 'true');
  url.searchParams.set('challengeId', r.mfa.challengeId);
  url.searchParams.set('methods', r.mfa.methods.join(','));
  url.searchParams.set('provider', flow.provider);
  url.searchParams.set('projectId', flow.project.id);
  return url.toString();
}

/** A link flow: the provider's answer goes to the app as it came, which finishes it with the guest's token. */
function linkReturn(reply: FastifyReply, flow: PendingLink, provider: string, q: Static<typeof Query>) {
  if (flow.provider !== provider) return redirectError(reply, flow, 'OAuth state mismatch');
  if (q.error || q.error_description) return redirectError(reply, flow, q.error_description ?? q.error ?? 'Linking was cancelled');
  if (!q.code || !q.state) return redirectError(reply, flow, 'Missing code or state');
  const url = new URL(flow.callbackUrl);
  url.searchParams.set('link', flow.provider);
  url.searchParams.set('projectId', flow.project.id);
  url.searchParams.set('state', q.state);
  url.searchParams.set('code', q.code);
  if (q.iss) url.searchParams.set('iss', q.iss);
  if (q.user) url.searchParams.set('user', q.user);
  return reply.header('cache-control', 'no-store').redirect(url.toString(), 302);
}

const PROTOCOL_ERRORS = [oauth.OperationProcessingError, oauth.ResponseBodyError, oauth.AuthorizationResponseError];

/**
 * The `error` parameter ends up in the user's address bar: only our own messages and the OAuth
 * library's protocol findings (e.g. a wrong token audience) go there; anything else (a
 * database or network error) stays in the log behind a generic message.
 */
function failureMessage(err: unknown, provider: string): string {
  if (err instanceof AppError) return err.message;
  if (PROTOCOL_ERRORS.some((cls) => err instanceof cls)) return `${provider} sign-in failed: ${(err as Error).message}`.slice(0, 300);
  return `${provider} sign-in failed. Please try again.`;
}

/**
 * The callback as a GET of the same path: a provider's `form_post` (Apple) arrives as a
 * cross-site POST, which carries no SameSite=Lax cookie, so the browser-binding cookie
 * (cookie.ts) would be missing. A 303 turns it into a top-level GET, which carries it.
 */
function asGet(provider: string, body: Static<typeof Query>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') params.set(k, v);
  return `/api/userAuth/social/${encodeURIComponent(provider)}/callback?${params.toString()}`;
}

export default async function socialCallbackFlow(app: App, ctx: AppContext): Promise<void> {
  // Only this scope (the public social routes) reads form bodies: the provider's form_post.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.post('/api/userAuth/social/:provider/callback', {
    schema: {
      tags: ['userAuth social'],
      summary: 'OAuth callback for providers that post their answer (response_mode=form_post, e.g. Apple): 303 to the GET callback',
      params: Type.Object({ provider: Type.String({ maxLength: 40 }) }),
      body: Query,
    },
    handler: async (req, reply) => {
      if (!isProviderName(req.params.provider)) throw SocialErrors.unsupported_provider();
      if (!req.body.state) throw SocialErrors.invalid_state();
      return reply.header('cache-control', 'no-store').redirect(asGet(req.params.provider, req.body), 303);
    },
  });

  app.get('/api/userAuth/social/:provider/callback', {
    schema: {
      tags: ['userAuth social'],
      summary: 'OAuth callback (registered with the provider); redirects to the project site',
      params: Type.Object({ provider: Type.String({ maxLength: 40 }) }),
      querystring: Query,
    },
    handler: async (req, reply) => {
      const { provider } = req.params;
      if (!isProviderName(provider)) throw SocialErrors.unsupported_provider();
      if (!req.query.state) throw SocialErrors.invalid_state();
      const flow = await resume(ctx, req.query.state, takeBrowserKey(ctx, req, reply, req.query.state));
      if ('link' in flow) return linkReturn(reply, flow, provider, req.query);
      // Another browser than the one that started the flow (login CSRF), or another provider.
      if (!flow.sameBrowser || flow.provider !== provider) return redirectError(reply, flow, 'OAuth state mismatch');
      if (req.query.error || req.query.error_description) {
        return redirectError(reply, flow, req.query.error_description ?? req.query.error ?? 'Sign-in was cancelled');
      }
      if (!req.query.code) return redirectError(reply, flow, 'Missing code or state');
      const params = new URLSearchParams({ code: req.query.code, state: req.query.state });
      if (req.query.iss) params.set('iss', req.query.iss);
      if (req.query.user) params.set('user', req.query.user);
      try {
        const done = await finish(ctx, flow, params, clientMeta(req));
        if (done.mfa) return reply.header('cache-control', 'no-store').redirect(challengeUrl(flow, done), 302);
        setRefreshCookie(ctx, reply, done.refreshToken);
        return reply.header('cache-control', 'no-store').redirect(successUrl(flow, done), 302);
      } catch (err) {
        if (!(err instanceof AppError)) req.log.warn({ err: { message: (err as Error)?.message }, provider }, 'social sign-in failed');
        return redirectError(reply, flow, failureMessage(err, provider));
      }
    },
  });
}
