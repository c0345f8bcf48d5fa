/**
 * SQL of the change stream (migrations/022, sql/70). Read on the owner's connection: the API
 * roles may only add rows. Every read stops below the oldest transaction still running
 * (`pg_snapshot_xmin`), so a change whose transaction commits late is read later, never
 * skipped, and an uncommitted one is never seen.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import { ORIGIN, type Position } from './position.js';

type Db = Kysely<Database>;

/**
 * Whether a console stream may open: the operator is still a member of the project and, for a
 * ticket issued under a session, that session is not revoked (logout, the sessions list, a
 * password change).
 */
export async function consoleStreamAllowed(db: Db, projectId: string, operatorId: string, sessionId: string | null): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`
    SELECT EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = ${projectId} AND m.operator_id = ${operatorId})
       AND ${sessionId === null ? sql`true` : sql`EXISTS (SELECT 1 FROM operator_sessions s WHERE s.family_id = ${sessionId} AND s.operator_id = ${operatorId} AND s.revoked_at IS NULL)`} AS ok`.execute(db);
  return r.rows[0]?.ok === true;
}

export interface ChangeRow {
  xid: string;
  id: string;
  project_id: string;
  collection: string;
  doc_id: string;
  action: 'create' | 'update' | 'delete' | 'restore';
  owner_id: string | null;
  version: number;
  data: Record<string, unknown> | null;
  truncated: boolean;
  created_ms: number;
  updated_ms: number;
  deleted_ms: number | null;
  /** When the change was written. */
  at_ms: number;
  /**
   * An update's difference (migrations/028): the previous values of the top-level fields it
   * changed and the fields it added; null for other actions, and for an update whose old or
   * new version is over the cap (sql/70_change_stream.sql: the previous version unknown).
   */
  prev_fields: Record<string, unknown> | null;
  prev_absent: string[] | null;
  prev_updated_ms: number | null;
}

const COLUMNS = sql`xid::text AS xid, id::text AS id, project_id, collection, doc_id, action, owner_id, version, data, truncated,
  floor(extract(epoch FROM doc_created_at) * 1000)::int8 AS created_ms,
  floor(extract(epoch FROM doc_updated_at) * 1000)::int8 AS updated_ms,
  floor(extract(epoch FROM doc_deleted_at) * 1000)::int8 AS deleted_ms,
  floor(extract(epoch FROM at) * 1000)::int8 AS at_ms, prev_fields, prev_absent,
  floor(extract(epoch FROM prev_updated_at) * 1000)::int8 AS prev_updated_ms`;

const WATERMARK = sql`pg_snapshot_xmin(pg_current_snapshot())`;
// NB: the select list renames xid and id to text, so ORDER BY names the table's columns
// (`changes.xid`): an unqualified name would sort by the text ('10' before '9').

/** Where the stream's committed past ends now: every change below it is final. */
export async function watermark(db: Db): Promise<Position> {
  const { rows } = await sql<{ xid: string }>`SELECT ${WATERMARK}::text AS xid`.execute(db);
  return { xid: BigInt(rows[0]!.xid), id: 0n };
}

/** The next `limit` final changes after `from`, in stream order. */
export async function changesAfter(db: Db, from: Position, limit: number): Promise<ChangeRow[]> {
  const { rows } = await sql<ChangeRow>`
    SELECT ${COLUMNS} FROM changes
    WHERE (xid, id) > (${from.xid.toString()}::xid8, ${from.id.toString()}::int8) AND xid < ${WATERMARK}
    ORDER BY changes.xid, changes.id LIMIT ${limit}`.execute(db);
  return rows;
}

/** One project's final changes in (from, to], in stream order: a resuming subscriber's gap. */
export async function projectChangesBetween(db: Db, projectId: string, from: Position, to: Position, limit: number): Promise<ChangeRow[]> {
  const { rows } = await sql<ChangeRow>`
    SELECT ${COLUMNS} FROM changes
    WHERE project_id = ${projectId}
      AND (xid, id) > (${from.xid.toString()}::xid8, ${from.id.toString()}::int8)
      AND (xid, id) <= (${to.xid.toString()}::xid8, ${to.id.toString()}::int8)
    ORDER BY changes.xid, changes.id LIMIT ${limit}`.execute(db);
  return rows;
}

/** The last change retention removed: a cursor below it has lost changes. */
export async function horizon(db: Db): Promise<Position> {
  const { rows } = await sql<{ xid: string; id: string }>`SELECT xid::text AS xid, id::text AS id FROM change_stream_horizon`.execute(db);
  const r = rows[0];
  return r ? { xid: BigInt(r.xid), id: BigInt(r.id) } : ORIGIN;
}

/**
 * Retention: removes final changes older than `before` and moves the horizon past them, in one
 * transaction. Returns how many were removed.
 */
export async function sweepChanges(db: Db, before: Date): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const { rows } = await sql<{ n: number; xid: string | null; id: string | null }>`
      WITH gone AS (
        DELETE FROM changes WHERE at < ${before} AND xid < ${WATERMARK} RETURNING xid, id
      ), last AS (
        SELECT xid, id FROM gone ORDER BY xid DESC, id DESC LIMIT 1
      )
      SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT xid::text FROM last) AS xid, (SELECT id::text FROM last) AS id`.execute(tx);
    const r = rows[0]!;
    if (r.xid !== null && r.id !== null) {
      await sql`
        UPDATE change_stream_horizon SET xid = ${r.xid}::xid8, id = ${r.id}::int8
        WHERE (xid, id) < (${r.xid}::xid8, ${r.id}::int8)`.execute(tx);
    }
    return r.n;
  });
}

/**
 * Which of `rows` (changes of one collection with access rules) the caller's read rule admits,
 * for a rule that needs the database (a lookup, `@auth.<users field>`; docs/rules.md). The
 * rule is the SQL the server compiled and stored (collections.rules_sql), never client text;
 * it is judged on each change's document as the change carries it (the row as it was after
 * the write, or before a delete), standing in for the partition's row under the partition's
 * name, so `$outer` in a lookup refers to it. Runs in the caller's tenant scope: the lookups
 * read other collections under their own policies, as a list would. A change whose document
 * was too large to carry is judged on the partition's current row instead. Answers the
 * positions (`xid-id`) admitted.
 */
export async function readableChanges(tx: Db, collectionId: string, readSql: string, rows: ChangeRow[]): Promise<Set<string>> {
  const table = sql.raw(`"documents_${collectionId.replace(/"/g, '""')}"`);
  const rule = sql.raw(`(${readSql})`);
  const out = new Set<string>();
  const key = (r: ChangeRow) => `${r.xid}-${r.id}`;
  const carried = rows.filter((r) => !r.truncated);
  if (carried.length > 0) {
    const image = carried.map((r) => ({
      k: key(r),
      id: r.doc_id,
      owner_id: r.owner_id,
      data: r.data ?? {},
      created_at: new Date(r.created_ms).toISOString(),
      updated_at: new Date(r.updated_ms).toISOString(),
    }));
    const { rows: ok } = await sql<{ k: string }>`
      SELECT ${table}.k FROM jsonb_to_recordset(${JSON.stringify(image)}::jsonb)
        AS ${table}(k text, id text, owner_id text, data jsonb, created_at timestamptz, updated_at timestamptz)
      WHERE ${rule}`.execute(tx);
    for (const r of ok) out.add(r.k);
  }
  const truncated = rows.filter((r) => r.truncated);
  if (truncated.length > 0) {
    const { rows: ok } = await sql<{ id: string }>`SELECT id FROM ${table} WHERE id = ANY(${truncated.map((r) => r.doc_id)}::text[])`.execute(tx);
    const visible = new Set(ok.map((r) => r.id));
    for (const r of truncated) if (visible.has(r.doc_id)) out.add(key(r));
  }
  return out;
}
