/**
 * A collection with hidden or read-only fields carries the BEFORE trigger `dp_<id>_<hash>` on
 * its partition (sql/21_field_protection.sql) with the collection's protection as argument.
 * When the protection changes, the trigger is replaced and every document is split again in
 * the schema change's transaction: values of fields no longer hidden go back into `data`, of
 * newly hidden ones out of it. The stored sizes follow, and the project's usage with them.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { FieldDef } from '../../db/types.js';
import type { Database } from '../../database.js';
import { refund } from '../../lib/quota-queries.js';
import { dbBytes } from '../data/quota.js';
import { partitionName } from './partition-queries.js';
import { protectionOf } from './protection.js';
import { WHOLE_DATA_SQL } from '../../db/whole-data.js';

const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 10);

async function currentTrigger(db: Kysely<Database>, collectionId: string): Promise<string | null> {
  const rows = await sql<{ tgname: string }>`
    SELECT tgname FROM pg_trigger WHERE tgrelid = to_regclass(${partitionName(collectionId)}) AND tgname ~ ${`^dp_${collectionId}_`}`.execute(db);
  return rows.rows[0]?.tgname ?? null;
}

async function hasChangeTrigger(db: Kysely<Database>, collectionId: string): Promise<boolean> {
  const rows = await sql`SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(${partitionName(collectionId)}) AND tgname = ${`dr_${collectionId}`}`.execute(db);
  return rows.rows.length > 0;
}

/** Brings the partition's protection trigger, and where the hidden values are kept, in line with the fields. */
export async function syncProtection(db: Kysely<Database>, collection: { id: string; project_id: string }, fields: FieldDef[]): Promise<void> {
  const table = partitionName(collection.id);
  const protection = protectionOf(fields);
  const spec = protection ? pg.escapeLiteral(JSON.stringify(protection)) : null;
  const wanted = spec ? `dp_${collection.id}_${hash(spec)}` : null;
  const have = await currentTrigger(db, collection.id);
  if (have === wanted) return;
  if (have) await sql.raw(`DROP TRIGGER IF EXISTS ${have} ON ${table}`).execute(db);
  if (wanted) await sql.raw(`CREATE TRIGGER ${wanted} BEFORE INSERT OR UPDATE OF data ON ${table} FOR EACH ROW EXECUTE FUNCTION plinth_protect_fields(${spec})`).execute(db);
  await resplit(db, collection, protection ? [...protection.owner, ...protection.secret] : [], !!wanted);
}

/**
 * Every document with a hidden value, stored or due: all of it back into `data`, which the new
 * trigger (if any) splits again. Not a change of the documents: no change-stream row for it.
 */
async function resplit(db: Kysely<Database>, collection: { id: string; project_id: string }, hidden: string[], triggered: boolean): Promise<void> {
  const table = partitionName(collection.id);
  const keys = `ARRAY[${hidden.map((k) => pg.escapeLiteral(k)).join(', ')}]::text[]`;
  const stream = await hasChangeTrigger(db, collection.id);
  if (stream) await sql.raw(`ALTER TABLE ${table} DISABLE TRIGGER dr_${collection.id}`).execute(db);
  // Without the trigger the size is `data` alone; with it, the trigger sets it.
  const size = triggered ? '' : `, size_bytes = octet_length((${WHOLE_DATA_SQL})::text)`;
  const res = await sql.raw<{ growth: string | null }>(`
    WITH moved AS (
      UPDATE ${table} SET size_before = size_bytes, data = ${WHOLE_DATA_SQL},
             private = NULL, secret = NULL${size}
      WHERE private IS NOT NULL OR secret IS NOT NULL OR data ?| ${keys}
      RETURNING size_bytes - size_before AS growth)
    SELECT sum(growth)::text AS growth FROM moved`).execute(db);
  if (stream) await sql.raw(`ALTER TABLE ${table} ENABLE TRIGGER dr_${collection.id}`).execute(db);
  const growth = Number(res.rows[0]?.growth ?? 0);
  if (growth !== 0) await refund(db, dbBytes(collection.project_id), -growth);
}

/**
 * The project's end users when its `users` schema changes: app_users' trigger
 * (sql/21_field_protection.sql) reads the hidden fields from the schema the caller has just
 * stored, so every user whose values are not where that schema puts them (a newly hidden
 * value still in `data`, a value in `private` / `secret` no longer hidden there) is written
 * whole again and the trigger splits it. None when the hidden fields did not change. Not a
 * profile change: `updated_at` stays.
 */
export async function syncUserProtection(db: Kysely<Database>, projectId: string, fields: FieldDef[]): Promise<void> {
  const keys = (which: (f: FieldDef) => boolean) => sql.raw(`ARRAY[${fields.filter(which).map((f) => pg.escapeLiteral(f.key)).join(', ')}]::text[]`);
  const owner = keys((f) => f.hidden === 'owner');
  const secret = keys((f) => f.hidden === 'secret');
  await sql`
    UPDATE app_users SET data = ${sql.raw(WHOLE_DATA_SQL)}, private = NULL, secret = NULL
     WHERE project_id = ${projectId}
       AND (data ?| ${owner} OR data ?| ${secret}
            OR coalesce(private, '{}') - ${owner} <> '{}' OR coalesce(secret, '{}') - ${secret} <> '{}')`.execute(db);
}
