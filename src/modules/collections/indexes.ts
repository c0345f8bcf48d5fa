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
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { CompoundIndex, Database, FieldDef } from '../../db/types.js';
import { SCALAR_TYPES } from './fields.js';
import { partitionName } from './partitions.js';

const INDEXED_FIELDS_MAX = 8;

interface IndexSpec {
  name: string;
  ddl: string;
}

function fieldExpression(type: FieldDef['type'], key: string): string {
  const fn = type === 'Number' ? 'plinth_num' : 'plinth_txt';
  return `${fn}(data, ${pg.escapeLiteral(key)})`;
}

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
    if (f.unique) {
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
 * Brings the collection's indexes in line with its fields, inside the caller's (owner)
 * transaction. A unique index over existing duplicates fails with SQLSTATE 23505.
 */
export async function syncIndexes(db: Kysely<Database>, collectionId: string, fields: FieldDef[], compound: CompoundIndex[]): Promise<void> {
  const want = desiredIndexes(collectionId, fields, compound);
  const have = new Set(await existingIndexes(db, collectionId));
  const wanted = new Set(want.map((w) => w.name));
  for (const name of have) if (!wanted.has(name)) await sql.raw(`DROP INDEX IF EXISTS ${name}`).execute(db);
  for (const w of want) if (!have.has(w.name)) await sql.raw(w.ddl).execute(db);
}
