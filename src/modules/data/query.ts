/**
 * The list query grammar (docs/wire-compatibility.md §5.1): paging, sort, cursor, filters with suffix
 * operators, and the list options. Parses the raw query object; knows nothing of SQL.
 */
import { isObjectId } from '../../lib/ids.js';
import { DataErrors } from './errors.js';

export type Op = 'eq' | 'gt' | 'gte' | 'lt' | 'lte' | 'ne' | 'in' | 'exists' | 'regex';

export interface Filter {
  field: string;
  op: Op;
  values: string[];
}

export interface SortKey {
  field: string;
  desc: boolean;
}

export interface ListQuery {
  filters: Filter[];
  sort: SortKey[];
  limit: number;
  offset: number;
  page: number;
  /** Present (possibly '') when keyset paging was asked for. */
  cursor?: string;
  count: boolean;
  /** `include_total=true`: count every match for `total`, even when the page does not show it. */
  includeTotal: boolean;
  includeDeleted: boolean;
  fields: string[] | null;
  populate: string[];
  meta: boolean;
  /** Full-text search over the collection's searchable fields (web search syntax). */
  search: string | null;
}

const RESERVED = new Set([
  'page', 'sort', 'limit', 'fields', 'populate', 'expand', 'count', 'meta', 'cursor', 'include_deleted', 'include_total', 'skip', 'key', 'x-api-key', 'hard',
  'search',
]);
// Longest suffixes first where one ends another (`_gte` before `_gt`).
const SUFFIXES: Array<[string, Op]> = [
  ['_gte', 'gte'], ['_gt', 'gt'], ['_lte', 'lte'], ['_lt', 'lt'], ['_ne', 'ne'], ['_in', 'in'], ['_exists', 'exists'], ['_regex', 'regex'],
];
const MAX_FILTERS = 30;
const MAX_REGEX = 128;

export type Raw = Record<string, unknown>;

export function strings(v: unknown): string[] {
  if (Array.isArray(v)) return v.map(String);
  return v === undefined || v === null ? [] : [String(v)];
}

export const first = (q: Raw, k: string): string | undefined => strings(q[k])[0];

/** A comma list, repeated parameters flattened, entries trimmed, empties dropped. */
export function list(v: unknown): string[] {
  return strings(v).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);
}

export function intParam(q: Raw, k: string, def: number): number {
  const raw = first(q, k);
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw DataErrors.invalid_query(`Invalid value for "${k}"; expected a number.`);
  return Math.trunc(n);
}

export function boolParam(q: Raw, k: string, def: boolean): boolean {
  const raw = first(q, k);
  if (raw === undefined || raw === '') return def;
  return raw === 'true' || raw === '1';
}

export function parseSort(raw: string | undefined): SortKey[] {
  const items = list(raw);
  if (items.length > 5) throw DataErrors.invalid_query('At most 5 sort fields are allowed.');
  return items.map((item) => {
    if (item.startsWith('-')) return { field: item.slice(1), desc: true };
    const [field, dir, extra] = item.split(':');
    if (extra !== undefined || !field) throw DataErrors.invalid_query(`Invalid sort '${item}'.`);
    if (dir === undefined || dir === 'asc' || dir === '1') return { field, desc: false };
    if (dir === 'desc' || dir === '-1') return { field, desc: true };
    throw DataErrors.invalid_query(`Invalid sort direction in '${item}'; use asc or desc.`);
  });
}

function parseFilter(key: string, value: unknown): Filter {
  for (const [suffix, op] of SUFFIXES) {
    if (key.endsWith(suffix) && key.length > suffix.length) {
      const field = key.slice(0, -suffix.length);
      const values = op === 'in' ? list(value) : strings(value).slice(-1);
      if (op === 'exists' && values[0] !== 'true' && values[0] !== 'false') {
        throw DataErrors.invalid_query(`Invalid value for "${key}"; expected "true" or "false".`);
      }
      if (op === 'regex' && (values[0] ?? '').length > MAX_REGEX) {
        throw DataErrors.invalid_query(`Regex pattern for "${key}" exceeds ${MAX_REGEX} characters.`);
      }
      if (op === 'regex') checkRegex(key, values[0] ?? '');
      return { field, op, values };
    }
  }
  return { field: key, op: 'eq', values: strings(value).slice(-1) };
}

function checkRegex(key: string, pattern: string): void {
  try {
    new RegExp(pattern, 'i');
  } catch {
    throw DataErrors.invalid_query(`Invalid regex pattern for "${key}".`);
  }
}

/** A document id from the path: 400 unless it is an ObjectId. */
export function checkId(id: string): void {
  if (!isObjectId(id)) throw DataErrors.invalid_query('Invalid ID format.');
}

const MAX_SEARCH = 256;

/** `search=…`: trimmed, empty means none, at most MAX_SEARCH characters. */
export function parseSearch(q: Raw): string | null {
  const raw = strings(q.search).at(-1)?.trim() ?? '';
  if (raw.length > MAX_SEARCH) throw DataErrors.invalid_query(`The search text exceeds ${MAX_SEARCH} characters.`);
  return raw || null;
}

/** Every parameter that is not one of `reserved` is a filter (the list grammar's suffixes). */
export function parseFilters(q: Raw, reserved: ReadonlySet<string>): Filter[] {
  const filters = Object.keys(q).filter((k) => !reserved.has(k)).map((k) => parseFilter(k, q[k]));
  if (filters.length > MAX_FILTERS) throw DataErrors.invalid_query(`At most ${MAX_FILTERS} filters are allowed.`);
  return filters;
}

export function parseListQuery(q: Raw): ListQuery {
  const limit = Math.min(100, Math.max(1, intParam(q, 'limit', 20)));
  const page = Math.max(1, intParam(q, 'page', 1));
  const skip = first(q, 'skip') !== undefined ? Math.max(0, intParam(q, 'skip', 0)) : undefined;
  const filters = parseFilters(q, RESERVED);
  const fields = list(q.fields);
  return {
    filters,
    sort: parseSort(first(q, 'sort')),
    limit,
    page,
    offset: skip ?? (page - 1) * limit,
    cursor: q.cursor === undefined ? undefined : (first(q, 'cursor') ?? ''),
    count: boolParam(q, 'count', false),
    includeTotal: boolParam(q, 'include_total', false),
    includeDeleted: boolParam(q, 'include_deleted', false),
    fields: fields.length ? fields : null,
    populate: [...list(q.populate), ...list(q.expand)],
    meta: boolParam(q, 'meta', true),
    search: parseSearch(q),
  };
}
