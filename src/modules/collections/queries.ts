/** SQL of the collections domain. Runs on the owner connection (dashboard / schema writes). */
import { sql, type Kysely } from 'kysely';
import type { CompoundIndex, FieldDef, RlsConfig } from '../../db/types.js';
import type { Database } from '../../database.js';
import { COLLECTION_NAME } from './fields.js';
import type { CollectionRow } from './view.js';

type Db = Kysely<Database>;

const json = <T>(v: T) => JSON.stringify(v) as unknown as T;
/** Timestamps from ctx.clock, as ISO text (the column types accept both). */
const ts = (d: Date) => d.toISOString() as never;

/** The project's collection by name (any case); a name no collection can have is simply unknown, never a query. */
export async function findCollection(db: Db, projectId: string, name: string): Promise<CollectionRow | undefined> {
  if (!COLLECTION_NAME.test(name)) return undefined; // e.g. a NUL byte, which PostgreSQL text refuses
  return db
    .selectFrom('collections')
    .selectAll()
    .where('project_id', '=', projectId)
    .where(sql<string>`lower(name)`, '=', name.toLowerCase())
    .executeTakeFirst();
}

export async function listCollections(db: Db, projectId: string): Promise<CollectionRow[]> {
  return db.selectFrom('collections').selectAll().where('project_id', '=', projectId).orderBy('name').execute();
}

export async function countCollections(db: Db, projectId: string): Promise<number> {
  const row = await db
    .selectFrom('collections')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('project_id', '=', projectId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Serialises collection creation per project so the plan limit check cannot race. */
export async function lockProject(db: Db, projectId: string): Promise<void> {
  await db.selectFrom('projects').select('id').where('id', '=', projectId).forUpdate().execute();
}

export async function insertCollection(
  db: Db, v: { projectId: string; name: string; fields: FieldDef[]; rls: RlsConfig; indexes: CompoundIndex[]; searchLanguage: string; realtime: boolean; now: Date },
) {
  return db
    .insertInto('collections')
    .values({
      project_id: v.projectId, name: v.name, fields: json(v.fields), rls: json(v.rls), indexes: json(v.indexes),
      search_language: v.searchLanguage, realtime: v.realtime, created_at: ts(v.now), updated_at: ts(v.now),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateCollectionFields(db: Db, id: string, fields: FieldDef[], indexes: CompoundIndex[], searchLanguage: string, now: Date) {
  return db
    .updateTable('collections')
    .set((eb) => ({
      fields: json(fields), indexes: json(indexes), search_language: searchLanguage, schema_version: eb('schema_version', '+', 1), updated_at: ts(now),
    }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function updateCollectionRls(db: Db, id: string, rls: RlsConfig, now: Date) {
  return db.updateTable('collections').set({ rls: json(rls), updated_at: ts(now) }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export async function updateCollectionRealtime(db: Db, id: string, realtime: boolean, now: Date) {
  return db.updateTable('collections').set({ realtime, updated_at: ts(now) }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** documents.owner_id mirrors the owner field, so the native policies can compare it. */
export async function recomputeOwners(db: Db, collectionId: string, ownerField: string): Promise<void> {
  if (ownerField === '_id') {
    await sql`UPDATE documents SET owner_id = id WHERE collection_id = ${collectionId}`.execute(db);
    return;
  }
  await sql`UPDATE documents SET owner_id = data ->> ${ownerField}
            WHERE collection_id = ${collectionId} AND owner_id IS DISTINCT FROM data ->> ${ownerField}`.execute(db);
}

/** Deletes the collection's row (its documents' partition is emptied by the caller). */
export async function deleteCollection(db: Db, id: string): Promise<void> {
  await db.deleteFrom('collections').where('id', '=', id).execute();
}

// ---- unique fields of the users schema (end users live in app_users, not in a partition) ----

/** Serialises a users-schema change with end-user writes of the project (sql/45_auth_unique_values.sql). */
export async function lockUsersSchema(db: Db, projectId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(plinth_users_schema_lock(${projectId}))`.execute(db);
}

export async function listUserUniqueFields(db: Db, projectId: string): Promise<Array<{ field: string; numeric: boolean }>> {
  return db.selectFrom('app_user_unique_fields').select(['field', 'numeric']).where('project_id', '=', projectId).execute();
}

/** Drops a unique field and (cascade) its values. */
export async function dropUserUniqueField(db: Db, projectId: string, field: string): Promise<void> {
  await db.deleteFrom('app_user_unique_fields').where('project_id', '=', projectId).where('field', '=', field).execute();
}

/** Adds a unique field and records every user's value; duplicates fail with SQLSTATE 23505. */
export async function addUserUniqueField(db: Db, projectId: string, field: string, numeric: boolean): Promise<void> {
  await db.insertInto('app_user_unique_fields').values({ project_id: projectId, field, numeric }).execute();
  const value = numeric ? sql`plinth_unique_key(plinth_num(data, ${field})::text)` : sql`plinth_unique_key(plinth_txt(data, ${field}))`;
  await sql`
    INSERT INTO app_user_unique_values (project_id, field, value, user_id)
    SELECT project_id, ${field}, v, id FROM (SELECT project_id, id, ${value} AS v FROM app_users WHERE project_id = ${projectId}) u
     WHERE v IS NOT NULL`.execute(db);
}
