/**
 * A searchable collection's partition keeps each document's search vector in
 * `search_vector` (migrations/021): a trigger `ds_<collectionId>` computes it on insert and on
 * a change of `data`, with the language and the searchable keys as its arguments, and a GIN
 * index `ds_<collectionId>_<hash>` serves `search_vector @@ query`. When the searchable keys or
 * the language change, the trigger is replaced and the vectors recomputed in the schema
 * change's transaction (like an index build, it locks only this collection's partition).
 */
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { FieldDef } from '../../db/types.js';
import type { Database } from '../../database.js';
import { sha256Hex } from '../../lib/crypto.js';
import { partitionName } from './partition-queries.js';
import { searchableKeys } from './search.js';

const hash = (text: string) => sha256Hex(text).slice(0, 10);

async function currentIndex(db: Kysely<Database>, collectionId: string): Promise<string | null> {
  const rows = await sql<{ indexname: string }>`
    SELECT indexname FROM pg_indexes WHERE tablename = ${partitionName(collectionId)} AND indexname ~ ${`^ds_${collectionId}_`}`.execute(db);
  return rows.rows[0]?.indexname ?? null;
}

/** Brings the partition's search trigger, vectors and index in line with the fields, in the caller's transaction. */
export async function syncSearch(db: Kysely<Database>, collectionId: string, fields: FieldDef[], language: string): Promise<void> {
  const table = partitionName(collectionId);
  const keys = searchableKeys(fields);
  const args = [language, ...keys].map((a) => pg.escapeLiteral(a)).join(', ');
  const wanted = keys.length ? `ds_${collectionId}_${hash(args)}` : null;
  const have = await currentIndex(db, collectionId);
  if (have === wanted) return;
  const trigger = `ds_${collectionId}`;
  if (have) await sql.raw(`DROP INDEX IF EXISTS ${have}`).execute(db);
  await sql.raw(`DROP TRIGGER IF EXISTS ${trigger} ON ${table}`).execute(db);
  if (!wanted) {
    await sql.raw(`UPDATE ${table} SET search_vector = NULL WHERE search_vector IS NOT NULL`).execute(db);
    return;
  }
  await sql.raw(`CREATE TRIGGER ${trigger} BEFORE INSERT OR UPDATE OF data ON ${table} FOR EACH ROW EXECUTE FUNCTION plinth_search_vector(${args})`).execute(db);
  const keyArray = `ARRAY[${keys.map((k) => pg.escapeLiteral(k)).join(', ')}]::text[]`;
  await sql.raw(`UPDATE ${table} SET search_vector = plinth_tsv(data, ${keyArray}, ${pg.escapeLiteral(language)}::regconfig)`).execute(db);
  await sql.raw(`CREATE INDEX ${wanted} ON ${table} USING gin (search_vector)`).execute(db);
}
