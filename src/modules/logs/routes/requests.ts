/** A project's request log (docs/dashboard.md "Request log"). */
import { Type, type TSchema } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { listRequestLog, listRequestRoutes } from '../service.js';

const Params = Type.Object({ projectId: Type.String() });
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const envelope = <T extends TSchema>(data: T) => Type.Object({ success: Type.Boolean(), data, message: Type.String() });

const Query = Type.Object({
  status: Type.Optional(
    Type.String({
      pattern: '^(all|ok|errors|4xx|5xx|[1-5][0-9]{2})$',
      description: '`errors` (400–599), `4xx`, `5xx`, `ok` (below 400), `all`, or one status such as `404`',
    }),
  ),
  route: Type.Optional(Type.String({ minLength: 1, maxLength: 300, description: 'a routed route pattern, e.g. `/api/data/:collectionName`' })),
  method: Type.Optional(Type.String({ pattern: '^[A-Z]{3,7}$' })),
  code: Type.Optional(Type.String({ pattern: '^[a-z][a-z0-9_]{0,63}$', description: 'an error code, e.g. `document_not_found`' })),
  cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}\\.[0-9]{1,19}$', description: "the previous page's `nextCursor`" })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
});

const RequestView = Type.Object({
  id: Type.String(),
  at: Type.String({ format: 'date-time', description: 'when the request arrived' }),
  method: Type.String(),
  route: Type.String({ description: 'the routed route pattern, never the URL (no ids, query strings or keys)' }),
  status: Type.Integer(),
  durationMs: Type.Number(),
  code: Nullable(Type.String({ description: "the error envelope's code, when the answer was an error" })),
  userId: Nullable(Type.String({ description: 'the end user whose access token the request carried, when verified' })),
});

export default async function requestLogRoutes(app: App, ctx: AppContext): Promise<void> {
  const tags = ['dashboard: logs'];

  app.get(
    '/api/projects/:projectId/logs/requests',
    {
      schema: {
        tags,
        summary: "The project's last public-API requests, newest first",
        description:
          'Time, method, routed route, status, duration, error code and user id; no bodies, headers, keys or query strings. Kept REQUEST_LOG_RETENTION_HOURS and at most REQUEST_LOG_MAX_ROWS per project.',
        params: Params,
        querystring: Query,
        response: { 200: envelope(Type.Object({ items: Type.Array(RequestView), nextCursor: Nullable(Type.String()) })) },
      },
    },
    async (req) => {
      const { limit = 50, ...filters } = req.query;
      return ok(await listRequestLog(ctx, operatorOf(req), req.params.projectId, { ...filters, limit }), 'Request log');
    },
  );

  app.get(
    '/api/projects/:projectId/logs/requests/routes',
    {
      schema: {
        tags,
        summary: "The routes in the project's request log, busiest first, with their error counts",
        params: Params,
        response: { 200: envelope(Type.Array(Type.Object({ route: Type.String(), requests: Type.Integer(), errors: Type.Integer() }))) },
      },
    },
    async (req) => ok(await listRequestRoutes(ctx, operatorOf(req), req.params.projectId), 'Request log routes'),
  );
}
