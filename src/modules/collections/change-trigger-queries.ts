/**
 * Which collections write their changes to the change stream (migrations/022, docs/realtime.md):
 * those with `realtime` on, those an enabled webhook endpoint of the project listens to
 * (every collection when the endpoint names none) and those an enabled after-hook of the
 * project names (docs/functions.md "After-hooks"). Their partition carries the AFTER row
 * trigger `dr_<collectionId>` (sql/70_change_stream.sql) with the collection's name and the
 * whole-document cap as arguments; other collections pay nothing on write.
 *
 * `syncChangeTriggers` brings a project's partitions in line, in the caller's owner
 * transaction; callers run it after any change to a collection's `realtime`, to the
 * project's endpoints or to its after-hooks. Adding or dropping a trigger locks only that collection's partition.
 */
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Database } from '../../database.js';
import { partitionName } from './partition-queries.js';

/** A change row carries the whole document up to this size; larger ones arrive flagged `truncated`. */
export const CHANGE_DOCUMENT_MAX_BYTES = 64 * 1024;

interface Wanted {
  id: string;
  name: string;
  streams: boolean;
  has: boolean;
}

export async function syncChangeTriggers(db: Kysely<Database>, projectId: string): Promise<void> {
  const { rows } = await sql<Wanted>`
    SELECT c.id, c.name,
           c.realtime OR EXISTS (
             SELECT 1 FROM webhook_endpoints e
             WHERE e.project_id = c.project_id AND e.enabled
               AND (cardinality(e.collections) = 0 OR lower(c.name) = ANY (e.collections)))
           OR EXISTS (
             SELECT 1 FROM functions f
             WHERE f.project_id = c.project_id AND f.kind = 'after' AND f.enabled
               AND f.trigger ->> 'collection' = lower(c.name)) AS streams,
           EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgname = 'dr_' || c.id AND NOT t.tgisinternal) AS has
    FROM collections c WHERE c.project_id = ${projectId}`.execute(db);
  for (const c of rows) {
    if (c.streams === c.has) continue;
    const table = partitionName(c.id);
    const trigger = `dr_${c.id}`;
    if (c.has) {
      await sql.raw(`DROP TRIGGER IF EXISTS ${trigger} ON ${table}`).execute(db);
    } else {
      await sql.raw(
        `CREATE TRIGGER ${trigger} AFTER INSERT OR UPDATE OR DELETE ON ${table} FOR EACH ROW ` +
          `EXECUTE FUNCTION plinth_record_change(${pg.escapeLiteral(c.name)}, '${CHANGE_DOCUMENT_MAX_BYTES}')`,
      ).execute(db);
    }
  }
}
