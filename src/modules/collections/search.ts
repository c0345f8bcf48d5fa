/**
 * Full-text search of a collection: which fields take part (declared top-level String fields
 * marked `searchable`), in which language, and the one expression both the GIN index
 * (indexes.ts) and the query (data/where.ts) use, so the planner matches them.
 */
import { sql, type RawBuilder } from 'kysely';
import pg from 'pg';
import type { FieldDef } from '../../db/types.js';

/** PostgreSQL's built-in text search configurations; `simple` (no stemming) is the default. */
export const SEARCH_LANGUAGES: ReadonlySet<string> = new Set([
  'simple', 'arabic', 'armenian', 'basque', 'catalan', 'danish', 'dutch', 'english', 'finnish', 'french', 'german',
  'greek', 'hindi', 'hungarian', 'indonesian', 'irish', 'italian', 'lithuanian', 'nepali', 'norwegian', 'portuguese',
  'romanian', 'russian', 'serbian', 'spanish', 'swedish', 'tamil', 'turkish', 'yiddish',
]);
export const DEFAULT_SEARCH_LANGUAGE = 'simple';

export const searchableKeys = (fields: FieldDef[]): string[] =>
  fields.filter((f) => f.searchable === true && f.type === 'String').map((f) => f.key);

/** The index's expression, as DDL text (keys and language validated, escaped as literals). */
export function searchVectorDdl(keys: string[], language: string): string {
  const array = `ARRAY[${keys.map((k) => pg.escapeLiteral(k)).join(', ')}]::text[]`;
  return `plinth_tsv(data, ${array}, ${pg.escapeLiteral(language)}::regconfig)`;
}

/** The same expression for a query: literals, never parameters, or no plan could use the index. */
export function searchVector(keys: string[], language: string): RawBuilder<unknown> {
  const array = sql`ARRAY[${sql.join(keys.map((k) => sql.lit(k)))}]::text[]`;
  return sql`plinth_tsv(data, ${array}, ${sql.lit(language)}::regconfig)`;
}
