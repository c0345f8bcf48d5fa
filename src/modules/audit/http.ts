/**
 * The audit log's one entry point on the dashboard surface (docs/audit.md): the declarations of
 * actions.ts stamped on the routes as they are registered, and two hooks that read the routed
 * route's declaration (`config.audit`, declare.ts). Before the handler, the
 * declared snapshot of the changed setting (for a project the operator owns); after a
 * successful answer (2xx), before it is sent, the entry: who (the operator's id and email),
 * from where (`req.ip`: TRUST_PROXY decides whether X-Forwarded-For counts), the action, the
 * target and the before/after, written in its own transaction right after the change's. A
 * failed write of the entry is logged at error level with the entry (secrets masked) and does
 * not turn the change's success into an error: the change has happened.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { isObjectId } from '../../lib/ids.js';
import { loadMemberProject } from '../projects/access.js';
import { declarationOf } from './actions.js';
import { isAudited, type AuditSpec } from './declare.js';
import { maskSecrets } from './mask.js';
import { recordAudit, type AuditEvent } from './service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The declared snapshot before the handler ran (audit hooks). */
    auditBefore?: { value: unknown };
  }
}

const specOf = (req: FastifyRequest): AuditSpec | undefined => {
  const d = req.routeOptions.config?.audit;
  return isAudited(d) ? d : undefined;
};

const projectParam = (req: FastifyRequest): string | undefined => {
  const id = (req.params as { projectId?: unknown } | undefined)?.projectId;
  return typeof id === 'string' && isObjectId(id) ? id : undefined;
};

async function snapshotOf(ctx: AppContext, spec: AuditSpec, projectId: string, req: FastifyRequest): Promise<unknown> {
  try {
    return (await spec.snapshot!(ctx, projectId, req)) ?? null;
  } catch {
    return null; // not there (yet, or any more)
  }
}

const json = (v: unknown) => JSON.stringify(v ?? null);

/** The top-level members of two objects that differ (both whole when either is not an object). */
export function changedMembers(before: unknown, after: unknown): { before: unknown; after: unknown } {
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObj(before) || !isObj(after)) return { before, after };
  const b: Record<string, unknown> = {};
  const a: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (json(before[k]) === json(after[k])) continue;
    if (k in before) b[k] = before[k];
    if (k in after) a[k] = after[k];
  }
  return { before: b, after: a };
}

function createdProjectId(payload: unknown): string | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const id = (JSON.parse(payload) as { data?: { _id?: unknown } }).data?._id;
    return typeof id === 'string' && isObjectId(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

async function entryOf(ctx: AppContext, spec: AuditSpec, req: FastifyRequest, projectId: string): Promise<AuditEvent> {
  let before: unknown = null;
  let after: unknown = null;
  const body = req.body !== null && typeof req.body === 'object' && typeof (req.body as { pipe?: unknown }).pipe !== 'function' ? (req.body as object) : undefined;
  if (spec.snapshot) {
    // Compared before masking: a secret replaced by another shows as masked on both sides.
    const changed = changedMembers(req.auditBefore?.value ?? null, await snapshotOf(ctx, spec, projectId, req));
    before = changed.before;
    after = changed.after;
    // Nothing the view shows changed (a provider key replaced: the view has only its flag): what was sent, masked.
    const empty = (v: unknown) => v !== null && typeof v === 'object' && Object.keys(v).length === 0;
    if (empty(before) && empty(after) && body && Object.keys(body).length) after = { sent: body };
  } else {
    const detail = spec.detail?.(req);
    const sent = spec.body ? body : undefined;
    after = sent || (detail && Object.keys(detail).length) ? { ...sent, ...detail } : null;
  }
  const operator = req.operator ? { id: req.operator.id, email: req.operator.email } : null;
  return { projectId, operator, ip: req.ip ?? null, action: spec.action, target: spec.target?.(req) ?? null, before, after };
}

export function registerAuditHooks(app: FastifyInstance, ctx: AppContext): void {
  // Each route's declaration from the table (actions.ts), unless its own options carry one.
  app.addHook('onRoute', (route) => {
    if (route.config?.audit !== undefined) return;
    const method = [route.method].flat()[0];
    const declared = method ? declarationOf(String(method), route.url) : undefined;
    if (declared) route.config = { ...route.config, audit: declared };
  });

  app.addHook('preHandler', async (req) => {
    const spec = specOf(req);
    const projectId = spec?.snapshot ? projectParam(req) : undefined;
    if (!spec || !projectId || !req.operator) return;
    // Only a project the operator owns is read (the handler answers 404 for the others).
    const owned = await loadMemberProject(ctx, req.operator, projectId).then(() => true, () => false);
    if (owned) req.auditBefore = { value: await snapshotOf(ctx, spec, projectId, req) };
  });

  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const spec = specOf(req);
    if (!spec || reply.statusCode < 200 || reply.statusCode >= 300) return payload;
    const projectId = spec.projectFromResponse ? createdProjectId(payload) : projectParam(req);
    if (!projectId) return payload;
    let event: AuditEvent | undefined;
    try {
      event = await entryOf(ctx, spec, req, projectId);
      await recordAudit(ctx, event);
    } catch (err) {
      req.log.error({ err, audit: event ? { ...event, before: maskSecrets(event.before), after: maskSecrets(event.after) } : { action: spec.action, projectId } }, 'audit: the entry of a successful change could not be written');
    }
    return payload;
  });
}
