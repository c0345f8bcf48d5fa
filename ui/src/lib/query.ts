/**
 * The records browser's filter builder and the data API's query string (the grammar of
 * docs/data.md): `field=value` for equality, `field_<op>=value` otherwise. Both directions,
 * so a saved filter, a pasted query string and the AI query builder's answer all become rows.
 */
export type Op = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists' | 'regex';

export const OPS: Array<{ op: Op; label: string }> = [
  { op: 'eq', label: '=' },
  { op: 'ne', label: '≠' },
  { op: 'gt', label: '>' },
  { op: 'gte', label: '≥' },
  { op: 'lt', label: '<' },
  { op: 'lte', label: '≤' },
  { op: 'in', label: 'in (a,b,c)' },
  { op: 'exists', label: 'exists' },
  { op: 'regex', label: 'matches (regex)' },
];

export interface FilterRow {
  field: string;
  op: Op;
  value: string;
}

/** Parameters that are options, not filters (the server's reserved list). */
export const RESERVED = new Set([
  'page', 'sort', 'limit', 'fields', 'populate', 'expand', 'count', 'meta', 'cursor', 'include_deleted', 'include_total', 'skip', 'key', 'x-api-key', 'hard', 'search',
]);

const SUFFIXES: Array<[string, Op]> = [
  ['_gte', 'gte'], ['_gt', 'gt'], ['_lte', 'lte'], ['_lt', 'lt'], ['_ne', 'ne'], ['_in', 'in'], ['_exists', 'exists'], ['_regex', 'regex'],
];

export function rowToParam(row: FilterRow): [string, string] {
  return [row.op === 'eq' ? row.field : `${row.field}_${row.op}`, row.value];
}

export function rowsToQuery(rows: FilterRow[]): URLSearchParams {
  const q = new URLSearchParams();
  for (const r of rows) if (r.field.trim()) q.append(...rowToParam({ ...r, field: r.field.trim() }));
  return q;
}

export function paramToRow(key: string, value: string): FilterRow {
  for (const [suffix, op] of SUFFIXES) {
    if (key.endsWith(suffix) && key.length > suffix.length) return { field: key.slice(0, -suffix.length), op, value };
  }
  return { field: key, op: 'eq', value };
}

/** The filter rows of a query string (options such as sort or limit are left out). */
export function queryToRows(qs: string | URLSearchParams): FilterRow[] {
  const q = typeof qs === 'string' ? new URLSearchParams(qs.replace(/^\?/, '')) : qs;
  const rows: FilterRow[] = [];
  for (const [k, v] of q) if (!RESERVED.has(k)) rows.push(paramToRow(k, v));
  return rows;
}

export interface SortState {
  field: string;
  desc: boolean;
}

export function sortParam(s: SortState | null): string | null {
  return s ? (s.desc ? `-${s.field}` : `${s.field}:asc`) : null;
}

export function parseSort(raw: string | null): SortState | null {
  if (!raw) return null;
  const first = raw.split(',')[0]!.trim();
  if (!first) return null;
  if (first.startsWith('-')) return { field: first.slice(1), desc: true };
  const [field = '', dir] = first.split(':');
  return { field, desc: dir === 'desc' || dir === '-1' };
}
