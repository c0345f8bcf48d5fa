/**
 * Public-API key check (docs/wire-compatibility.md §1.5): reads `x-api-key` (or, for publishable keys only,
 * `?key=` / `?x-api-key=`, which are then removed from the query), resolves the project,
 * applies the project's allowed-domains list to publishable keys and the plan's per-minute
 * request budget. Sets `req.project` and `req.keyKind`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { Errors } from '../../lib/errors.js';
import { KEY_PREFIX, type ApiKeyKind } from './keys.js';
import type { ProjectRecord } from './cache.js';
import { RequestAuthErrors } from '../../lib/identity/request-errors.js';
import { bindProjectLog } from '../../plugins/request-log.js';

declare module 'fastify' {
  interface FastifyRequest {
    project?: ProjectRecord;
    keyKind?: ApiKeyKind;
  }
}

function takeKey(req: FastifyRequest): string | undefined {
  const query = req.query as Record<string, unknown> | undefined;
  let fromQuery: unknown;
  if (query && typeof query === 'object') {
    fromQuery = query['key'] ?? query['x-api-key'];
    delete query['key'];
    delete query['x-api-key'];
  }
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header) return header.trim();
  if (typeof fromQuery === 'string' && fromQuery.startsWith(KEY_PREFIX.publishable)) return fromQuery;
  return undefined;
}

function hostMatches(entry: string, origin: URL): boolean {
  const e = entry.replace(/\/+$/, '').toLowerCase();
  if (e === '*') return true;
  if (e.startsWith('*.')) {
    const base = e.slice(2);
    return origin.hostname === base || origin.hostname.endsWith('.' + base);
  }
  return e === origin.origin.toLowerCase() || e === origin.hostname;
}

function checkAllowedDomains(req: FastifyRequest, project: ProjectRecord): void {
  const domains = (project.settings.allowedDomains as string[] | undefined) ?? ['*'];
  if (domains.includes('*')) return;
  const raw = req.headers.origin ?? req.headers.referer;
  if (!raw) {
    throw Errors.forbidden('Forbidden: Origin header missing and this key is restricted to specific domains.');
  }
  let origin: URL;
  try {
    origin = new URL(raw);
  } catch {
    throw Errors.validation_failed('Invalid Origin header format.');
  }
  if (!domains.some((d) => hostMatches(d, origin))) {
    throw Errors.forbidden(`Forbidden: Origin ${origin.origin} is not allowed by this project's CORS policy.`);
  }
}

export function apiKeyAuth(ctx: AppContext) {
  return async function requireApiKey(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const raw = takeKey(req);
    if (!raw) throw RequestAuthErrors.api_key_missing();
    const resolved = await ctx.projects.resolveKey(raw);
    if (!resolved) {
      throw RequestAuthErrors.api_key_invalid(undefined, { action: 'Please use a valid API key or regenerate a new one from the dashboard.' });
    }
    bindProjectLog(req, reply, resolved.project.id);
    if (!resolved.project.ownerVerified) throw RequestAuthErrors.owner_not_verified();
    if (resolved.kind === 'publishable') checkAllowedDomains(req, resolved.project);
    await ctx.limits.enforce(
      `project:${resolved.project.id}:rpm`,
      resolved.project.plan.publicRequestsPerMinute,
      60,
      'Rate limit exceeded (per minute). Please slow down or upgrade your plan.',
    );
    req.project = resolved.project;
    req.keyKind = resolved.kind;
  };
}

/** preHandler for routes that take only the secret key. Use after `requireApiKey`. */
export async function requireSecretKey(req: FastifyRequest): Promise<void> {
  if (req.keyKind !== 'secret') throw RequestAuthErrors.secret_key_required();
}

/** The resolved project; only call in handlers behind `requireApiKey`. */
export function projectOf(req: FastifyRequest): ProjectRecord {
  if (!req.project) throw new Error('route is missing the api key preHandler');
  return req.project;
}
