/**
 * Per-collection indexes, on the collection's own partition of documents (partitions.ts):
 *
 * - unique fields: `UNIQUE (expr) WHERE deleted_at IS NULL` → a real constraint, race-free
 *   under concurrent inserts; soft-deleted documents release their values;
 * - declared top-level String/Number/Boolean/Date/Ref fields (up to INDEXED_FIELDS_MAX):
 *   `(expr, created_at DESC, id DESC)`, serving an equality filter + the default sort, or a
 *   range/sort on the field. Not partial, so ANALYZE keeps statistics on the field's values
 *   (the planner ignores a partial index's) and the planner knows how selective a condition is;
 * - declared compound indexes (compound.ts): `dc_…` on `(expr1, expr2, …, created_at DESC, id DESC)`.
 *
 * `expr` is `plinth_num(data, key)` for Numbers and `plinth_txt(data, key)` otherwise, the
 * same expressions the query builder emits (see migrations/003_data.sql for why).
 * Index names: `du_` / `dx_` / `dc_<collectionId>_<hash>`; the hash covers the keys and
 * expressions, so a type change rebuilds the index. Building one locks only this
 * collection's partition.
 *
 * The `users` collection's documents are the project's end users, who live in `app_users`
 * (shared by every project). Its unique fields are enforced there by one shared unique index
 * over (project, field, value) rows that a trigger keeps (migrations/017, sql/45): this module
 * decides which fields they are, by the same rule and accessor as the indexes above.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { CompoundIndex, FieldDef } from '../../db/types.js';
import type { Database } from '../../database.js';
import { SCALAR_TYPES } from './fields.js';
import { partitionName } from './partition-queries.js';
import { DEFAULT_SEARCH_LANGUAGE } from './search.js';
import { syncSearch } from './search-index-queries.js';
import { addUserUniqueField, dropUserUniqueField, listUserUniqueFields, lockUsersSchema } from './queries.js';

const INDEXED_FIELDS_MAX = 8;

interface IndexSpec {
  name: string;
  ddl: string;
}

function fieldExpression(type: FieldDef['type'], key: string): string {
  const fn = type === 'Number' ? 'plinth_num' : 'plinth_txt';
  return `${fn}(data, ${pg.escapeLiteral(key)})`;
}

/** A declared unique field that gets a unique index: top-level and scalar. */
const isUnique = (f: FieldDef) => f.unique === true && SCALAR_TYPES.has(f.type);

/** Keys of the users schema that are columns of app_users, not custom data (already unique: email). */
const USER_COLUMNS = new Set(['email', 'password']);

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 10);
}

/**
 * Declared compound indexes: `(expr1, expr2, ..., created_at DESC, id DESC)`. Callers have
 * validated them against these fields (compound.ts): each names a declared scalar field.
 */
function compoundIndexes(collectionId: string, fields: FieldDef[], compound: CompoundIndex[]): IndexSpec[] {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const table = partitionName(collectionId);
  return compound.map((ix) => {
    const exprs = ix.fields.map((k) => fieldExpression(byKey.get(k)!.type, k)).join(', ');
    const name = `dc_${collectionId}_${shortHash('c' + exprs)}`;
    return { name, ddl: `CREATE INDEX ${name} ON ${table} (${exprs}, created_at DESC, id DESC)` };
  });
}

/** The indexes a collection should have, by name. Collection ids are validated 24-hex. */
function desiredIndexes(collectionId: string, fields: FieldDef[], compound: CompoundIndex[]): IndexSpec[] {
  const table = partitionName(collectionId);
  const out: IndexSpec[] = compoundIndexes(collectionId, fields, compound);
  let plain = 0;
  for (const f of fields) {
    if (!SCALAR_TYPES.has(f.type)) continue;
    const expr = fieldExpression(f.type, f.key);
    if (isUnique(f)) {
      const name = `du_${collectionId}_${shortHash('u' + expr)}`;
      out.push({ name, ddl: `CREATE UNIQUE INDEX ${name} ON ${table} (${expr}) WHERE deleted_at IS NULL` });
    } else if (plain < INDEXED_FIELDS_MAX) {
      plain++;
      const name = `dx_${collectionId}_${shortHash('x' + expr)}`;
      out.push({ name, ddl: `CREATE INDEX ${name} ON ${table} (${expr}, created_at DESC, id DESC)` });
    }
  }
  return out;
}

async function existingIndexes(db: Kysely<Database>, collectionId: string): Promise<string[]> {
  const rows = await sql<{ indexname: string }>`
    SELECT indexname FROM pg_indexes
    WHERE tablename = ${partitionName(collectionId)} AND indexname ~ ${`^d[uxc]_${collectionId}_`}`.execute(db);
  return rows.rows.map((r) => r.indexname);
}

/**
 * The users schema's unique fields in app_users, in line with `fields` (none: all dropped).
 * Runs under the project's users-schema lock, so no end-user write slips between the rebuild
 * and the commit. Existing duplicates under a new unique field fail with SQLSTATE 23505.
 */
export async function syncUserUniques(db: Kysely<Database>, projectId: string, fields: FieldDef[]): Promise<void> {
  await lockUsersSchema(db, projectId);
  const want = new Map(fields.filter((f) => isUnique(f) && !USER_COLUMNS.has(f.key)).map((f) => [f.key, f.type === 'Number']));
  const have = await listUserUniqueFields(db, projectId);
  for (const h of have) if (want.get(h.field) !== h.numeric) await dropUserUniqueField(db, projectId, h.field);
  for (const [field, numeric] of want) {
    if (!have.some((h) => h.field === field && h.numeric === numeric)) await addUserUniqueField(db, projectId, field, numeric);
  }
}

export const isUsersCollection = (name: string) => name.toLowerCase() === 'users';

/**
 * Brings the collection's indexes in line with its fields, inside the caller's (owner)
 * transaction. A unique index over existing duplicates fails with SQLSTATE 23505.
 */
export async function syncIndexes(
  db: Kysely<Database>, collection: { id: string; project_id: string; name: string; search_language?: string }, fields: FieldDef[], compound: CompoundIndex[],
): Promise<void> {
  const collectionId = collection.id;
  if (isUsersCollection(collection.name)) await syncUserUniques(db, collection.project_id, fields);
  const want = desiredIndexes(collectionId, fields, compound);
  const have = new Set(await existingIndexes(db, collectionId));
  const wanted = new Set(want.map((w) => w.name));
  for (const name of have) if (!wanted.has(name)) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
  for (const w of want) if (!have.has(w.name)) await sql.raw(w.ddl).execute(db);
  await syncSearch(db, collectionId, fields, collection.search_language ?? DEFAULT_SEARCH_LANGUAGE);
}
