/**
 * The request log as the dashboard reads it: a project's last public-API requests, newest
 * first, filtered by status class, route, method or error code, in pages. Knows no HTTP. Reads
 * run in the project's tenant scope (the table's policy shows no other project's rows), after
 * the operator's ownership of the project is checked (404 otherwise).
 */
import type { AppContext } from '../../context.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import { listRequests, requestRoutes, type RequestFilter } from './queries.js';
import { cursorOf, parseCursor, requestView } from './view.js';

/** `errors` (400–599), `4xx`, `5xx`, `ok` (below 400) or one status (`404`). */
export type StatusFilter = string;

const CLASSES = new Map<string, { from: number; to: number }>([
  ['ok', { from: 100, to: 399 }],
  ['errors', { from: 400, to: 599 }],
  ['4xx', { from: 400, to: 499 }],
  ['5xx', { from: 500, to: 599 }],
]);

function statusRange(status: StatusFilter | undefined): RequestFilter['status'] {
  if (status === undefined || status === 'all') return undefined;
  const known = CLASSES.get(status);
  if (known) return known;
  const n = Number(status);
  return { from: n, to: n };
}

export interface RequestQuery {
  status?: StatusFilter;
  route?: string;
  method?: string;
  code?: string;
  cursor?: string;
  limit: number;
}

export async function listRequestLog(ctx: AppContext, operator: OperatorIdentity, projectId: string, q: RequestQuery) {
  const project = await loadMemberProject(ctx, operator, projectId);
  // What this node still holds goes in first: on one node, a request is in its log at once.
  await ctx.requestLog.flush();
  const rows = await ctx.db.replicaRead({ projectId: project.id, keyKind: 'operator' }, (db) =>
    listRequests(db, project.id, {
      status: statusRange(q.status),
      route: q.route,
      method: q.method,
      code: q.code,
      before: q.cursor ? parseCursor(q.cursor) : undefined,
      limit: q.limit + 1,
    }),
  );
  const page = rows.slice(0, q.limit);
  const last = page[page.length - 1];
  return { items: page.map(requestView), nextCursor: rows.length > q.limit && last ? cursorOf(last) : null };
}

/** The routes in the project's log, busiest first, with how many of their requests failed. */
export async function listRequestRoutes(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  const project = await loadMemberProject(ctx, operator, projectId);
  await ctx.requestLog.flush();
  const rows = await ctx.db.replicaRead({ projectId: project.id, keyKind: 'operator' }, (db) => requestRoutes(db, project.id, 200));
  return rows.map((r) => ({ route: r.route, requests: Number(r.requests), errors: Number(r.errors) }));
}
