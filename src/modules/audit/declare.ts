/**
 * How a dashboard route declares what the audit log records of it (docs/audit.md): in its
 * route options, `config: { audit: audited('keys.rotate', {...}) }`, or
 * `config: { audit: notAudited('why') }` for a route that changes nothing of a project (a
 * preview, the operator's own account). The audit hooks (http.ts) read the declaration of the
 * routed route; test/architecture/audit-declarations.test.ts fails for a mutating dashboard
 * route without one. Imports nothing but types: every route file may import it.
 */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';

export interface AuditSpec {
  /** The stable action name, `<area>.<verb>`. */
  action: string;
  /** What was changed, from the request (a collection name, `collection/documentId`). */
  target?: (req: FastifyRequest) => string | null | undefined;
  /**
   * The changed setting as it stands, read before the handler runs and again after it
   * succeeded: the entry keeps the top-level members that differ (null when it does not exist).
   * Only called for a project the operator owns.
   */
  snapshot?: (ctx: AppContext, projectId: string, req: FastifyRequest) => Promise<unknown>;
  /** Without a snapshot: the request body (masked) as `after`. */
  body?: boolean;
  /** Without a snapshot: facts about the request (query flags) merged into `after`. */
  detail?: (req: FastifyRequest) => Record<string, unknown>;
  /** The project is the one the response creates (`data._id`), not a `:projectId` parameter. */
  projectFromResponse?: boolean;
}

export interface NotAudited {
  /** Why the route writes no entry (it changes no project setting or data). */
  none: string;
}

export type AuditDeclaration = AuditSpec | NotAudited;

export const audited = (action: string, spec: Omit<AuditSpec, 'action'> = {}): AuditSpec => ({ action, ...spec });

export const notAudited = (reason: string): NotAudited => ({ none: reason });

export const isAudited = (d: AuditDeclaration | undefined): d is AuditSpec => d !== undefined && 'action' in d;

/** A target read from path parameters, joined with `/` (`collectionName`, `id` → `posts/65f…`). */
export const byParams = (...names: string[]) => (req: FastifyRequest): string | null => {
  const params = (req.params ?? {}) as Record<string, string | undefined>;
  const parts = names.map((n) => params[n]).filter((v): v is string => typeof v === 'string');
  return parts.length ? parts.join('/') : null;
};

/** A target read from a body member. */
export const byBody = (name: string) => (req: FastifyRequest): string | null => {
  const v = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
};

/** The query string's members named, as `detail`. */
export const queryFlags = (...names: string[]) => (req: FastifyRequest): Record<string, unknown> => {
  const q = (req.query ?? {}) as Record<string, unknown>;
  return Object.fromEntries(names.filter((n) => q[n] !== undefined).map((n) => [n, q[n]]));
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** What the audit log records of this dashboard route (src/modules/audit/declare.ts). */
    audit?: AuditDeclaration;
  }
}
