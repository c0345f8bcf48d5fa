/**
 * /api/functions/:name (and anything below it): a project's HTTP functions, any method
 * (docs/functions.md "HTTP functions"). The API key names the project; the end user's token,
 * when there is one, is the caller's identity that `plinth.data` acts with. JSON bodies are
 * parsed as everywhere else; any other body reaches the function as text, or base64 when binary.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import type { App } from '../../../app.js';
import { projectOf } from '../../projects/api-key-auth.js';
import { optionalUser } from '../../auth/user-auth.js';
import { callHttpFunction, type HttpEventInput } from '../run-service.js';
import type { FunctionCaller } from '../host.js';
import { COMMIT_POSITION_HEADER } from '../../../db/replicas.js';

// OPTIONS stays the CORS preflight's (src/plugins/cors.ts); HEAD comes with GET.
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Headers that carry the caller's credentials: the function gets the identity, never the secret. */
const PRIVATE_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization']);
const TEXT = /^(text\/|application\/(x-www-form-urlencoded|xml|graphql)|application\/[a-z.+-]*\+xml)/i;

function eventOf(req: FastifyRequest, rest: string): HttpEventInput {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (PRIVATE_HEADERS.has(k) || v === undefined) continue;
    headers[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const event: HttpEventInput = { method: req.method, path: rest ? `/${rest}` : '', query: { ...(req.query as Record<string, unknown>) }, headers, body: null };
  const body = req.body;
  if (Buffer.isBuffer(body)) {
    if (TEXT.test(String(req.headers['content-type'] ?? ''))) event.body = body.toString('utf8');
    else {
      event.body = body.toString('base64');
      event.bodyEncoding = 'base64';
    }
  } else if (body !== undefined) event.body = body;
  return event;
}

export default async function httpFunctionRoutes(app: App, ctx: AppContext): Promise<void> {
  // Any body type reaches the function (JSON keeps the JSON parser and its guards).
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: ctx.config.bodyLimit }, (_req, body, done) => done(null, body));

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const { name, '*': rest } = req.params as { name: string; '*'?: string };
    const position = req.headers[COMMIT_POSITION_HEADER];
    const user = await optionalUser(ctx, req);
    const caller: FunctionCaller = {
      keyKind: req.keyKind === 'secret' ? 'secret' : 'publishable',
      userId: user?.id ?? null,
      claims: user?.claims ?? null,
      ...(typeof position === 'string' && position.length <= 20 ? { after: position } : {}),
    };
    const answer = await callHttpFunction(ctx, projectOf(req).id, name, caller, eventOf(req, rest ?? ''));
    return reply.status(answer.status).headers(answer.headers).send(answer.body);
  };
  const schema = {
    tags: ['functions'],
    summary: "Call a project's HTTP function (any method; the function sets status, headers and body)",
    params: Type.Object({ name: Type.String({ maxLength: 63 }), '*': Type.Optional(Type.String()) }),
  };
  app.route({ method: [...METHODS], url: '/api/functions/:name', schema, handler });
  app.route({ method: [...METHODS], url: '/api/functions/:name/*', schema, handler });
}
