/**
 * Parsed filters and sorts → parameterised SQL over the documents table. Every value and
 * field name is a bind parameter; only fixed operator text is written into the SQL.
 */
import { sql, type RawBuilder } from 'kysely';
import type { CollectionDef } from '../collections/cache.js';
import { searchableKeys } from '../collections/search.js';
import { DataErrors } from './errors.js';
import { KEY_PREFIX_CHARS, resolveField, type FieldRef } from './fields.js';
import type { Filter, SortKey } from './query.js';
import { elementCandidates, isNumeric, typedArray, typedValue } from './values.js';

const CMP = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function looseCompare(f: FieldRef, op: keyof typeof CMP, raw: string): RawBuilder<unknown> {
  const o = sql.raw(CMP[op]);
  // CASE, not AND: SQL does not promise to evaluate the type test before the cast.
  // A numeric-looking value compares with stored numbers, anything else with stored strings.
  if (isNumeric(raw)) return sql`(CASE WHEN jsonb_typeof(${f.expr}) = 'number' THEN (${f.expr})::numeric END) ${o} ${raw}::numeric`;
  return sql`(CASE WHEN jsonb_typeof(${f.expr}) = 'string' THEN ${f.expr} #>> '{}' END) ${o} ${raw}::text`;
}

/** The first characters of a String value that plinth_key keeps (code points, as PostgreSQL's left()). */
const keyPrefix = (v: string) => Array.from(v).slice(0, KEY_PREFIX_CHARS).join('');
/** Shorter than the prefix: `plinth_key(data, k) = v` alone is exact (a longer value's key is 200 long). */
const fitsPrefix = (v: string) => Array.from(v).length < KEY_PREFIX_CHARS;

/**
 * Equality with one of `raws` (`eq` has one). Undeclared and Array fields test containment
 * (`@>`): a scalar contains only itself, an array each of its elements, so `tags=café` finds
 * the documents whose `tags` hold "café" (served by the field's GIN index, when it has one).
 * A String with a prefix index (migrations/025) compares the prefix, which is exact for a value
 * shorter than it; a longer value also compares the whole text, once the prefix found the rows.
 */
function equalsAny(f: FieldRef, raws: string[]): RawBuilder<unknown> {
  if (f.kind === 'loose') {
    const candidates = raws.flatMap((r) => elementCandidates(f, r));
    return candidates.length === 1 ? sql`${f.expr} @> ${candidates[0]}::jsonb` : sql`${f.expr} @> ANY(${candidates}::jsonb[])`;
  }
  const one = raws.length === 1;
  const exact = one ? sql`${f.expr} = ${typedValue(f, raws[0]!)}` : sql`${f.expr} = ANY(${typedArray(f, raws)})`;
  if (!f.prefix) return exact;
  const prefixes = [...new Set(raws.map(keyPrefix))];
  const byPrefix = one ? sql`${f.prefix} = ${prefixes[0]}::text` : sql`${f.prefix} = ANY(${prefixes}::text[])`;
  return raws.every(fitsPrefix) ? byPrefix : sql`(${byPrefix} AND ${exact})`;
}

function condition(f: FieldRef, filter: Filter): RawBuilder<unknown> {
  const raw = filter.values[0] ?? '';
  switch (filter.op) {
    case 'exists':
      return raw === 'true' ? sql`${f.presence} IS NOT NULL` : sql`${f.presence} IS NULL`;
    case 'regex':
      return sql`${f.text} ~* ${raw}::text`;
    case 'in':
      if (filter.values.length === 0) return sql`false`;
      return equalsAny(f, filter.values);
    case 'eq':
      return equalsAny(f, [raw]);
    case 'ne':
      if (f.kind === 'loose') return sql`NOT coalesce(${equalsAny(f, [raw])}, false)`;
      return sql`${f.expr} IS DISTINCT FROM ${typedValue(f, raw)}`;
    default:
      if (f.kind === 'loose') return looseCompare(f, filter.op, raw);
      return sql`${f.expr} ${sql.raw(CMP[filter.op])} ${typedValue(f, raw)}`;
  }
}

export function filterConditions(col: CollectionDef, filters: Filter[]): RawBuilder<unknown>[] {
  return filters.map((flt) => condition(resolveField(col, flt.field), flt));
}

export function hasRegex(filters: Filter[]): boolean {
  return filters.some((f) => f.op === 'regex');
}

export interface OrderPlan {
  keys: Array<{ ref: FieldRef; desc: boolean }>;
  sql: RawBuilder<unknown>;
}

/** ORDER BY with `id` as the final tie-breaker; default newest first (documents_recent_idx). */
export function orderBy(col: CollectionDef, sort: SortKey[]): OrderPlan {
  const given = sort.length ? sort : [{ field: 'createdAt', desc: true }];
  const keys = given.map((s) => ({ ref: resolveField(col, s.field), desc: s.desc }));
  const parts = keys.map((k) => sql`${k.ref.expr} ${sql.raw(k.desc ? 'DESC' : 'ASC')}`);
  if (keys[keys.length - 1]!.ref.kind !== 'id') parts.push(sql`id ${sql.raw(keys[0]!.desc ? 'DESC' : 'ASC')}`);
  return { keys, sql: sql.join(parts) };
}

export function and(parts: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return parts.length ? sql.join(parts, sql` AND `) : sql`true`;
}

export interface SearchPlan {
  condition: RawBuilder<unknown>;
  /** Relevance, for ordering when the list has no sort of its own. */
  rank: RawBuilder<unknown>;
}

/**
 * `search=` over the collection's searchable fields, in its language, with web search syntax
 * ("quoted phrase", or, -word), folded to lower case like the documents (plinth_fold,
 * migrations/021, and ς as σ since migrations/030), against each document's stored vector (collections/search-index-queries.ts).
 */
export function searchPlan(col: CollectionDef, text: string | null): SearchPlan | null {
  if (text === null) return null;
  const keys = searchableKeys(col.fields);
  if (!keys.length) throw DataErrors.invalid_query('This collection has no searchable fields: mark String fields searchable in its schema.');
  const query = sql`websearch_to_tsquery(${sql.lit(col.search_language)}::regconfig, plinth_fold(${text}::text))`;
  return { condition: sql`search_vector @@ ${query}`, rank: sql`ts_rank(search_vector, ${query})` };
}
