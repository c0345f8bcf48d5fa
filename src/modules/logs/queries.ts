/** Every SQL statement of the logs domain (the request log, migrations/064_request_logs.sql). */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';

type Db = Kysely<Database>;

/** A batch of requests, column by column (one array per column, the same length each). */
export interface RequestColumns {
  projectIds: string[];
  /** Milliseconds since the epoch. */
  at: number[];
  methods: string[];
  routes: string[];
  statuses: number[];
  durations: number[];
  codes: Array<string | null>;
  userIds: Array<string | null>;
}

/**
 * Writes a batch in one statement: eight array parameters, whatever the number of rows (no
 * statement text or parameter list that grows with the batch). `at` is stored in whole
 * milliseconds (migrations/066): the page cursor carries a JavaScript time, and a row a fraction
 * of a millisecond past it would fall between two pages.
 */
export async function insertRequests(db: Db, c: RequestColumns): Promise<void> {
  const at = c.at.map((ms) => Math.round(ms));
  await sql`
    INSERT INTO request_logs (project_id, at, method, route, status, duration_ms, code, user_id)
    SELECT u.project_id, timestamptz 'epoch' + u.at * interval '1 millisecond', u.method, u.route, u.status, u.duration_ms, u.code, u.user_id
      FROM unnest(${c.projectIds}::text[], ${at}::int8[], ${c.methods}::text[], ${c.routes}::text[],
                  ${c.statuses}::smallint[], ${c.durations}::real[], ${c.codes}::text[], ${c.userIds}::text[])
        AS u (project_id, at, method, route, status, duration_ms, code, user_id)`.execute(db);
}

export interface RequestFilter {
  /** Inclusive status range. */
  status?: { from: number; to: number };
  route?: string;
  method?: string;
  code?: string;
  /** Rows older than this one (the cursor): `at`, then `id`. */
  before?: { at: Date; id: string };
  limit: number;
}

/** A project's requests, newest first (its tenant scope: the policy shows no other's). */
export function listRequests(db: Db, projectId: string, f: RequestFilter) {
  let q = db
    .selectFrom('request_logs')
    .select(['id', 'at', 'method', 'route', 'status', 'duration_ms', 'code', 'user_id'])
    .where('project_id', '=', projectId);
  if (f.status) q = q.where('status', '>=', f.status.from).where('status', '<=', f.status.to);
  if (f.route !== undefined) q = q.where('route', '=', f.route);
  if (f.method !== undefined) q = q.where('method', '=', f.method);
  if (f.code !== undefined) q = q.where('code', '=', f.code);
  const before = f.before;
  if (before) q = q.where((eb) => eb(eb.refTuple('at', 'id'), '<', eb.tuple(before.at, before.id)));
  return q.orderBy('at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
}

/** The routes in a project's log, busiest first, with their error counts (the console's route filter). */
export function requestRoutes(db: Db, projectId: string, limit: number) {
  return db
    .selectFrom('request_logs')
    .select((eb) => [
      'route',
      eb.fn.countAll<string>().as('requests'),
      sql<string>`count(*) FILTER (WHERE status >= 400)`.as('errors'),
    ])
    .where('project_id', '=', projectId)
    .groupBy('route')
    .orderBy('requests', 'desc')
    .orderBy('route')
    .limit(limit)
    .execute();
}

/** The age bound: rows older than `before`, every project at once. */
export async function deleteRequestsBefore(db: Db, before: Date): Promise<number> {
  const res = await db.deleteFrom('request_logs').where('at', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

/**
 * The size bound: per project, everything older than its `keep` newest rows (one index scan of
 * at most `keep` entries per project, on the (project_id, at, id) index).
 */
export async function trimRequestsPerProject(db: Db, keep: number): Promise<number> {
  const res = await sql`
    DELETE FROM request_logs r
     USING (SELECT p.id AS project_id, c.at, c.id
              FROM projects p
             CROSS JOIN LATERAL (SELECT x.at, x.id FROM request_logs x
                                  WHERE x.project_id = p.id
                                  ORDER BY x.at DESC, x.id DESC OFFSET ${keep} LIMIT 1) c) cut
     WHERE r.project_id = cut.project_id AND (r.at, r.id) <= (cut.at, cut.id)`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}

/** A deleted project's log (no foreign key: see the migration). */
export async function deleteProjectRequests(db: Db, projectId: string): Promise<void> {
  await db.deleteFrom('request_logs').where('project_id', '=', projectId).execute();
}
