/**
 * CORS (contract §1.4). Public routes echo the caller's Origin with credentials, because the
 * SDK sends `credentials: "include"` from browsers; dashboard routes only answer the
 * configured dashboard origins.
 */
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';

const DASHBOARD_PREFIXES = ['/api/auth', '/api/projects', '/api/user', '/api/admin'];
const ALLOWED_HEADERS = ['x-api-key', 'authorization', 'content-type', 'x-refresh-token', 'x-refresh-token-mode', 'user-agent', 'x-csrf-token', 'x-request-id'];

function isDashboardPath(url: string): boolean {
  return DASHBOARD_PREFIXES.some((p) => url === p || url.startsWith(p + '/') || url.startsWith(p + '?'));
}

export async function registerCors(app: FastifyInstance, config: Config): Promise<void> {
  const dashboardOrigins = new Set([new URL(config.dashboardUrl).origin, ...config.allowedOrigins]);
  if (!config.production) {
    for (const o of ['http://localhost:5173', 'http://localhost:3000', 'http://127.0.0.1:5173']) dashboardOrigins.add(o);
  }
  await app.register(cors, {
    hook: 'onRequest',
    delegator: (req: FastifyRequest, cb) => {
      const origin = req.headers.origin;
      const allowed = origin !== undefined && (!isDashboardPath(req.url) || dashboardOrigins.has(origin));
      cb(null, {
        origin: allowed ? origin : false,
        credentials: true,
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD'],
        allowedHeaders: ALLOWED_HEADERS,
        exposedHeaders: ['x-refresh-token', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-request-id'],
        maxAge: 600,
      });
    },
  });
}
