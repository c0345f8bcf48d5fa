/**
 * Full-text search of a collection: which fields take part (declared top-level String fields
 * marked `searchable`) and in which language. The vector itself is stored per document
 * (documents.search_vector, kept by search-index.ts's trigger).
 */
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
