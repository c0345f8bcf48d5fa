/**
 * Per-collection indexes, on the collection's own partition of documents (partitions.ts):
 *
 * - unique fields: `UNIQUE (expr) WHERE deleted_at IS NULL` → a real constraint, race-free
 *   under concurrent inserts; soft-deleted documents release their values;
 * - declared top-level String/Number/Boolean/Date/Ref fields (up to INDEXED_FIELDS_MAX; those
 *   marked `index: true` first, none marked `index: false`):
 *   `(expr, created_at DESC, id DESC)`, serving an equality filter + the default sort, or a
 *   range/sort on the field. Not partial, so ANALYZE keeps statistics on the field's values
 *   (the planner ignores a partial index's) and the planner knows how selective a condition is;
 * - top-level Array fields marked `index: true`: a GIN index (jsonb_path_ops) on the array,
 *   serving `tags=x` / `tags_in=…` (element containment, data/where.ts);
 * - declared compound indexes (compound.ts): `dc_…` on `(expr1, expr2, …, created_at DESC, id DESC)`.
 *
 * `expr` is `plinth_num(data, key)` for Numbers, `plinth_key(data, key)` (the first 200
 * characters) for non-unique Strings, so a value of any length fits in the index (a B-tree
 * entry holds about 2 700 bytes, migrations/025), and `plinth_txt(data, key)` otherwise: the
 * same expressions the query builder emits (see migrations/003_data.sql for why).
 * Index names: `du_` / `dx_` / `dg_` / `dc_<collectionId>_<hash>`; the hash covers the keys and
 * expressions, so a type change rebuilds the index. Building one locks only this
 * collection's partition. `reconcileAllIndexes` brings every collection in line at start-up,
 * so a change of this design reaches collections made before it.
 *
 * The `users` collection's documents are the project's end users, who live in `app_users`
 * (shared by every project). Its unique fields are enforced there by one shared unique index
 * over (project, field, value) rows that a trigger keeps (migrations/017, sql/45): this module
 * decides which fields they are, by the same rule and accessor as the indexes above.
 */
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { CompoundIndex, FieldDef } from '../../db/types.js';
import type { Database } from '../../database.js';
import { sha256Hex } from '../../lib/crypto.js';
import { SCALAR_TYPES } from './fields.js';
import { partitionName } from './partition-queries.js';
import { DEFAULT_SEARCH_LANGUAGE } from './search.js';
import { syncSearch } from './search-index-queries.js';
import { syncProtection, syncUserProtection } from './protection-queries.js';
import { addUserUniqueField, dropUserUniqueField, listUserUniqueFields, lockUsersSchema } from './queries.js';

const INDEXED_FIELDS_MAX = 8;

interface IndexSpec {
  name: string;
  ddl: string;
}

/** The accessor a field's B-tree index is built on; data/fields.ts emits the same. */
function fieldExpression(f: FieldDef): string {
  const fn = f.type === 'Number' ? 'plinth_num' : f.type === 'String' && !f.unique ? 'plinth_key' : 'plinth_txt';
  return `${fn}(data, ${pg.escapeLiteral(f.key)})`;
}

/** A declared unique field that gets a unique index: top-level and scalar. */
const isUnique = (f: FieldDef) => f.unique === true && SCALAR_TYPES.has(f.type);

/** Keys of the users schema that are columns of app_users, not custom data (already unique: email). */
const USER_COLUMNS = new Set(['email', 'password']);

function shortHash(text: string): string {
  return sha256Hex(text).slice(0, 10);
}

/**
 * Declared compound indexes: `(expr1, expr2, ..., created_at DESC, id DESC)`. Callers have
 * validated them against these fields (compound.ts): each names a declared scalar field.
 */
function compoundIndexes(collectionId: string, fields: FieldDef[], compound: CompoundIndex[]): IndexSpec[] {
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const table = partitionName(collectionId);
  return compound.map((ix) => {
    const exprs = ix.fields.map((k) => fieldExpression(byKey.get(k)!)).join(', ');
    const name = `dc_${collectionId}_${shortHash('c' + exprs)}`;
    return { name, ddl: `CREATE INDEX ${name} ON ${table} (${exprs}, created_at DESC, id DESC)` };
  });
}

/** The indexes a collection should have, by name. Collection ids are validated 24-hex. */
function desiredIndexes(collectionId: string, fields: FieldDef[], compound: CompoundIndex[]): IndexSpec[] {
  const table = partitionName(collectionId);
  const out: IndexSpec[] = compoundIndexes(collectionId, fields, compound);
  for (const f of fields) {
    if (!isUnique(f)) continue;
    const expr = fieldExpression(f);
    const name = `du_${collectionId}_${shortHash('u' + expr)}`;
    out.push({ name, ddl: `CREATE UNIQUE INDEX ${name} ON ${table} (${expr}) WHERE deleted_at IS NULL` });
  }
  for (const f of plainIndexed(fields)) {
    const expr = fieldExpression(f);
    const name = `dx_${collectionId}_${shortHash('x' + expr)}`;
    out.push({ name, ddl: `CREATE INDEX ${name} ON ${table} (${expr}, created_at DESC, id DESC)` });
  }
  for (const f of fields.filter((x) => x.type === 'Array' && x.index === true)) {
    const expr = `(data -> ${pg.escapeLiteral(f.key)})`;
    const name = `dg_${collectionId}_${shortHash('g' + expr)}`;
    out.push({ name, ddl: `CREATE INDEX ${name} ON ${table} USING gin (${expr} jsonb_path_ops)` });
  }
  return out;
}

/** Non-unique scalars that get a B-tree index: `index: true` first, then in order, at most 8. */
function plainIndexed(fields: FieldDef[]): FieldDef[] {
  const candidates = fields.filter((f) => SCALAR_TYPES.has(f.type) && !isUnique(f) && f.index !== false && !f.hidden);
  const marked = candidates.filter((f) => f.index === true);
  return [...marked, ...candidates.filter((f) => f.index !== true)].slice(0, INDEXED_FIELDS_MAX);
}

async function existingIndexes(db: Kysely<Database>, collectionId: string): Promise<string[]> {
  const rows = await sql<{ indexname: string }>`
    SELECT indexname FROM pg_indexes
    WHERE tablename = ${partitionName(collectionId)} AND indexname ~ ${`^d[uxcg]_${collectionId}_`}`.execute(db);
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
  if (isUsersCollection(collection.name)) {
    await syncUserUniques(db, collection.project_id, fields);
    await syncUserProtection(db, collection.project_id, fields);
  }
  const want = desiredIndexes(collectionId, fields, compound);
  const have = new Set(await existingIndexes(db, collectionId));
  const wanted = new Set(want.map((w) => w.name));
  for (const name of have) if (!wanted.has(name)) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
  for (const w of want) if (!have.has(w.name)) await sql.raw(w.ddl).execute(db);
  await syncSearch(db, collectionId, fields, collection.search_language ?? DEFAULT_SEARCH_LANGUAGE);
  await syncProtection(db, collection, fields);
}

/**
 * Brings every collection's B-tree and GIN indexes in line with this code's design: the first
 * start after an upgrade that changes it (migrations/025 moved non-unique Strings to
 * plinth_key) rebuilds what differs, and nothing when all agree (one query for the collections,
 * one for the index names). A transaction per collection under an advisory lock on its id, so
 * nodes starting together build each index once. A collection that cannot be brought in line
 * (existing duplicates under a unique field) keeps its indexes and is reported.
 */
export async function reconcileAllIndexes(db: Kysely<Database>, onError: (collectionId: string, err: unknown) => void): Promise<number> {
  const collections = await db.selectFrom('collections').select(['id', 'project_id', 'name', 'fields', 'indexes', 'search_language']).execute();
  const rows = await sql<{ indexname: string }>`
    SELECT indexname FROM pg_indexes WHERE indexname ~ '^d[uxcg]_[0-9a-f]{24}_'`.execute(db);
  const have = new Set(rows.rows.map((r) => r.indexname));
  const perCollection = new Map<string, number>();
  for (const name of have) perCollection.set(name.slice(3, 27), (perCollection.get(name.slice(3, 27)) ?? 0) + 1);
  let rebuilt = 0;
  for (const c of collections) {
    const want = desiredIndexes(c.id, c.fields, c.indexes);
    if (want.length === (perCollection.get(c.id) ?? 0) && want.every((w) => have.has(w.name))) continue;
    try {
      await db.transaction().execute(async (tx) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${'plinth_indexes:' + c.id}))`.execute(tx);
        await syncIndexes(tx, c, c.fields, c.indexes);
      });
      rebuilt++;
    } catch (err) {
      onError(c.id, err);
    }
  }
  return rebuilt;
}
