/**
 * A parsed aggregate query checked against the collection's schema and turned into SQL
 * fragments (aggregate-query.ts parses; queries.ts aggregateRows runs the statement).
 *
 * Only declared top-level scalar fields and the timestamps can be grouped or aggregated: they
 * have typed accessors (the ones their indexes and statistics are built on), so no per-row
 * JSON guessing over a whole partition. Each field's accessor is evaluated once per document in
 * an inner select (f0, f1…) that the outer grouping reads: `sum=price&avg=price` would
 * otherwise call it twice per row. Every column has a positional alias (f0, g0, m0): client
 * text is never an identifier.
 */
import { sql, type RawBuilder } from 'kysely';
import type { CollectionDef } from '../collections/cache.js';
import type { AggregateQuery, GroupSpec, MetricSpec } from './aggregate-query.js';
import { metricName } from './aggregate-query.js';
import { DataErrors } from './errors.js';
import { resolveField, type FieldRef } from './fields.js';

type Value = string | number | boolean | null;
type Shape = 'text' | 'number' | 'boolean' | 'date';

interface Column {
  alias: string;
  name: string;
  expr: RawBuilder<unknown>;
  shape: Shape;
}

export interface AggregatePlan {
  /** The accessor of each field used, once per document (aliased f0, f1…). */
  inputs: RawBuilder<unknown>[];
  groups: Column[];
  metrics: Array<Column & { spec: MetricSpec }>;
  order: RawBuilder<unknown> | null;
}

export interface AggregateGroup {
  key: Record<string, Value>;
  [metric: string]: unknown;
}

const TIMESTAMPS = new Set(['createdAt', 'updatedAt']);

/** A declared top-level scalar or a timestamp; anything else cannot be aggregated. */
function aggregatable(col: CollectionDef, name: string, what: string): FieldRef {
  if (name.includes('.')) throw DataErrors.invalid_query(`Cannot ${what} '${name}': only top-level fields.`);
  const ref = resolveField(col, name);
  if (ref.kind === 'ts' && TIMESTAMPS.has(name)) return ref;
  if (!ref.declared) throw DataErrors.invalid_query(`Cannot ${what} '${name}': declare it in the collection schema first.`);
  return ref;
}

/** The inner select's columns: one per field, whatever number of aggregates read it. */
class Inputs {
  private readonly byName = new Map<string, RawBuilder<unknown>>();
  readonly columns: RawBuilder<unknown>[] = [];

  /** `ref` read from the inner select: its column, added on first use. */
  of(ref: FieldRef): FieldRef {
    let col = this.byName.get(ref.name);
    if (!col) {
      const alias = `f${this.columns.length}`;
      this.columns.push(sql`${ref.expr} AS ${sql.ref(alias)}`);
      col = sql.ref(alias);
      this.byName.set(ref.name, col);
    }
    return { ...ref, expr: col };
  }
}

const isDate = (ref: FieldRef) => ref.kind === 'ts' || ref.declared === 'Date';

/**
 * A Date field as timestamptz. Stored dates are ISO strings (the write path normalises them);
 * the pattern guards a value written before the field was declared a Date.
 */
function asTimestamp(ref: FieldRef): RawBuilder<unknown> {
  if (ref.kind === 'ts') return ref.expr;
  return sql`(CASE WHEN ${ref.expr} ~ '^\\d{4}-\\d{2}-\\d{2}T' THEN (${ref.expr})::timestamptz END)`;
}

function shapeOf(ref: FieldRef): Shape {
  if (isDate(ref)) return 'date';
  if (ref.declared === 'Number') return 'number';
  if (ref.declared === 'Boolean') return 'boolean';
  return 'text';
}

function groupColumn(col: CollectionDef, inputs: Inputs, g: GroupSpec, i: number): Column {
  const ref = inputs.of(aggregatable(col, g.field, 'group by'));
  const alias = `g${i}`;
  if (g.truncate === null) return { alias, name: g.field, expr: isDate(ref) ? asTimestamp(ref) : ref.expr, shape: shapeOf(ref) };
  if (!isDate(ref)) throw DataErrors.invalid_query(`Cannot truncate '${g.field}': only Date fields, createdAt and updatedAt.`);
  // Buckets in UTC; the unit is one of a fixed list, written as a literal.
  return { alias, name: g.field, expr: sql`date_trunc(${sql.lit(g.truncate)}, ${asTimestamp(ref)}, 'UTC')`, shape: 'date' };
}

function metricColumn(col: CollectionDef, inputs: Inputs, m: MetricSpec, i: number): Column & { spec: MetricSpec } {
  const base = { alias: `m${i}`, name: metricName(m), spec: m };
  if (m.field === null) return { ...base, expr: sql`count(*)::int`, shape: 'number' };
  const ref = inputs.of(aggregatable(col, m.field, m.fn));
  switch (m.fn) {
    case 'countDistinct':
      return { ...base, expr: sql`count(DISTINCT ${ref.expr})::int`, shape: 'number' };
    case 'sum':
    case 'avg':
      if (ref.declared !== 'Number') throw DataErrors.invalid_query(`Cannot ${m.fn} '${m.field}': only Number fields.`);
      return { ...base, expr: sql`${sql.raw(m.fn)}(${ref.expr})`, shape: 'number' };
    default: {
      const shape = shapeOf(ref);
      if (shape === 'boolean' || ref.declared === 'Ref') throw DataErrors.invalid_query(`Cannot ${m.fn} '${m.field}': only Number, String and Date fields.`);
      const expr = shape === 'date' ? asTimestamp(ref) : ref.expr;
      return { ...base, expr: sql`${sql.raw(m.fn === 'min' ? 'min' : 'max')}(${expr})`, shape };
    }
  }
}

/** ORDER BY the requested outputs, then every group key (a stable order for equal values). */
function orderOf(q: AggregateQuery, groups: Column[], metrics: Column[]): RawBuilder<unknown> | null {
  const byName = new Map([...groups, ...metrics].map((c) => [c.name, c.alias]));
  const parts = q.sort.map((s) => {
    const alias = byName.get(s.field);
    if (!alias) throw DataErrors.invalid_query(`Cannot sort by '${s.field}': sort by a grouped field or a requested aggregate.`);
    return sql`${sql.ref(alias)} ${sql.raw(s.desc ? 'DESC' : 'ASC')} NULLS LAST`;
  });
  for (const g of groups) parts.push(sql`${sql.ref(g.alias)} ASC NULLS LAST`);
  return parts.length ? sql.join(parts) : null;
}

export function planAggregate(col: CollectionDef, q: AggregateQuery): AggregatePlan {
  const inputs = new Inputs();
  const groups = q.groupBy.map((g, i) => groupColumn(col, inputs, g, i));
  const metrics = q.metrics.map((m, i) => metricColumn(col, inputs, m, i));
  return { inputs: inputs.columns, groups, metrics, order: orderOf(q, groups, metrics) };
}

function decode(shape: Shape, v: unknown): Value {
  if (v === null || v === undefined) return null;
  if (shape === 'date') return v instanceof Date ? v.toISOString() : String(v);
  if (shape === 'boolean') return v === 'true' || v === true;
  if (shape === 'number') return Number(v);
  return String(v);
}

/** One result row → `{ key: {status: 'paid'}, count: 3, sum: {price: 30} }`. */
export function groupView(plan: AggregatePlan, row: Record<string, unknown>): AggregateGroup {
  const key: Record<string, Value> = {};
  for (const g of plan.groups) key[g.name] = decode(g.shape, row[g.alias]);
  const out: AggregateGroup = { key };
  for (const m of plan.metrics) {
    const value = decode(m.shape, row[m.alias]);
    if (m.spec.field === null) out.count = value;
    else ((out[m.spec.fn] ??= {}) as Record<string, Value>)[m.spec.field] = value;
  }
  return out;
}
