/**
 * The aggregate query grammar (GET /api/data/:collection/aggregate): which aggregates, grouped
 * by what, sorted how, over which documents (the list API's filters). Parses the raw query
 * object; knows nothing of SQL or of the collection's schema (aggregate-plan.ts checks fields).
 *
 *   ?count&sum=price&avg=price&min=price,createdAt&countDistinct=category
 *   &groupBy=status,createdAt:month&sort=-count&limit=100&status_ne=draft
 */
import { DataErrors } from './errors.js';
import { boolParam, first, intParam, list, parseFilters, parseSearch, parseSort, type Filter, type Raw, type SortKey } from './query.js';

export type Metric = 'count' | 'countDistinct' | 'sum' | 'avg' | 'min' | 'max';
export const TRUNCATIONS = ['hour', 'day', 'week', 'month', 'year'] as const;
export type Truncation = (typeof TRUNCATIONS)[number];

export interface MetricSpec {
  fn: Metric;
  /** null for count(*). */
  field: string | null;
}

export interface GroupSpec {
  field: string;
  truncate: Truncation | null;
}

export interface AggregateQuery {
  metrics: MetricSpec[];
  groupBy: GroupSpec[];
  /** Keys: `count`, `<fn>.<field>` or a grouped field's name. */
  sort: SortKey[];
  limit: number;
  filters: Filter[];
  /** Full-text search, as in the list. */
  search: string | null;
  includeDeleted: boolean;
}

export const MAX_GROUP_KEYS = 3;
export const MAX_METRICS = 8;
export const MAX_GROUPS = 1000;
const FIELD_METRICS: Metric[] = ['countDistinct', 'sum', 'avg', 'min', 'max'];
const RESERVED = new Set([...FIELD_METRICS, 'count', 'groupBy', 'sort', 'limit', 'include_deleted', 'search', 'key', 'x-api-key']);

/** `count`, `count=*`, `count=true` and `count=1` ask for the number of documents per group. */
function wantsCount(q: Raw): boolean {
  if (!Object.hasOwn(q, 'count')) return false;
  const raw = first(q, 'count') ?? '';
  if (['', '*', 'true', '1'].includes(raw)) return true;
  if (raw === 'false' || raw === '0') return false;
  throw DataErrors.invalid_query('Invalid value for "count"; use count, count=* or count=true.');
}

function parseMetrics(q: Raw): MetricSpec[] {
  const metrics: MetricSpec[] = wantsCount(q) ? [{ fn: 'count', field: null }] : [];
  for (const fn of FIELD_METRICS) {
    for (const field of new Set(list(q[fn]))) metrics.push({ fn, field });
  }
  if (metrics.length === 0) metrics.push({ fn: 'count', field: null });
  if (metrics.length > MAX_METRICS) throw DataErrors.invalid_query(`At most ${MAX_METRICS} aggregates are allowed.`);
  return metrics;
}

function parseGroup(item: string): GroupSpec {
  const [field, unit, extra] = item.split(':');
  if (!field || extra !== undefined) throw DataErrors.invalid_query(`Invalid groupBy '${item}'.`);
  if (unit === undefined) return { field, truncate: null };
  const truncate = TRUNCATIONS.find((t) => t === unit);
  if (!truncate) throw DataErrors.invalid_query(`Invalid date truncation '${unit}'; use ${TRUNCATIONS.join(', ')}.`);
  return { field, truncate };
}

function parseGroupBy(q: Raw): GroupSpec[] {
  const groups = list(q.groupBy).map(parseGroup);
  if (groups.length > MAX_GROUP_KEYS) throw DataErrors.invalid_query(`At most ${MAX_GROUP_KEYS} groupBy fields are allowed.`);
  if (new Set(groups.map((g) => g.field)).size !== groups.length) throw DataErrors.invalid_query('A field may be grouped by only once.');
  return groups;
}

export function parseAggregateQuery(q: Raw): AggregateQuery {
  return {
    metrics: parseMetrics(q),
    groupBy: parseGroupBy(q),
    sort: parseSort(first(q, 'sort')),
    limit: Math.min(MAX_GROUPS, Math.max(1, intParam(q, 'limit', 100))),
    filters: parseFilters(q, RESERVED),
    search: parseSearch(q),
    includeDeleted: boolParam(q, 'include_deleted', false),
  };
}

/** The name a metric's value has in the answer and in `sort`: `count` or `sum.price`. */
export const metricName = (m: MetricSpec): string => (m.field === null ? m.fn : `${m.fn}.${m.field}`);
