/**
 * A subscription's filters (the list API's grammar: `status=open`, `price_gte=10`, …) compiled
 * once, at subscribe time, into a test of a changed document in memory: the node decides who
 * gets an event without a query per subscriber. It gives the answer the list query would give
 * for that document (same typing of values as src/modules/data/values.ts; text compares in
 * byte order, as under the C collation). `_regex` is refused (400): PostgreSQL's and
 * JavaScript's regular expressions differ.
 */
import type { CollectionDef } from '../collections/cache.js';
import { valueAtPath } from '../data/doc-path.js';
import { DataErrors } from '../data/errors.js';
import { resolveField, type FieldRef } from '../data/fields.js';
import type { Filter } from '../data/query.js';
import { elementCandidates, isNumeric, plain } from '../data/values.js';

/** What a filter sees of a changed document. */
export interface Candidate {
  id: string;
  data: Record<string, unknown>;
  createdMs: number;
  updatedMs: number;
}

export type Match = (doc: Candidate) => boolean;

type Value = string | number | boolean | null;

const SYSTEM_TIME: ReadonlyMap<string, (d: Candidate) => number> = new Map([
  ['createdAt', (d: Candidate) => d.createdMs],
  ['updatedAt', (d: Candidate) => d.updatedMs],
]);

/** `doc ->> key`: the text of a JSON value (strings unquoted), null for null or absent. */
function asText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** Text order of the C collation: UTF-8 bytes. */
const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

function compareWith(op: Filter['op'], c: number): boolean {
  switch (op) {
    case 'gt': return c > 0;
    case 'gte': return c >= 0;
    case 'lt': return c < 0;
    case 'lte': return c <= 0;
    default: return false;
  }
}

/** The typed value of one field of a document, as the list query's expression reads it. */
function reader(f: FieldRef): (d: Candidate) => Value | undefined {
  if (f.name === '_id') return (d) => d.id;
  const time = SYSTEM_TIME.get(f.name);
  if (time) return (d) => time(d);
  if (f.name === 'isDeleted') return () => false;
  if (f.name === 'deletedAt') return () => null;
  const path = f.name.split('.');
  if (f.kind === 'num') return (d) => { const v = valueAtPath(d.data, path); return typeof v === 'number' && Number.isFinite(v) ? v : null; };
  if (f.kind === 'txt') return (d) => asText(valueAtPath(d.data, path));
  return (d) => valueAtPath(d.data, path) as Value | undefined; // loose: the JSON value itself
}

function typed(f: FieldRef, raw: string): Value {
  const v = plain(f, raw);
  if (f.kind === 'ts') return Date.parse(v as string);
  return v;
}

/** A declared or system field: typed values, SQL's NULL semantics (a NULL never compares). */
function typedTest(f: FieldRef, filter: Filter): Match {
  const read = reader(f);
  const raw = filter.values[0] ?? '';
  const cmp = (a: Value, b: Value) => (typeof a === 'string' && typeof b === 'string' ? byteOrder(a, b) : Number(a) - Number(b));
  switch (filter.op) {
    case 'exists': {
      const want = raw === 'true';
      return (d) => (read(d) !== null && read(d) !== undefined) === want;
    }
    case 'eq': {
      const v = typed(f, raw);
      return (d) => { const x = read(d); return x !== null && x !== undefined && cmp(x, v) === 0; };
    }
    case 'ne': {
      const v = typed(f, raw);
      return (d) => { const x = read(d); return x === null || x === undefined || cmp(x, v) !== 0; };
    }
    case 'in': {
      const vs = filter.values.map((r) => typed(f, r));
      return (d) => { const x = read(d); return x !== null && x !== undefined && vs.some((v) => cmp(x, v) === 0); };
    }
    default: {
      const v = typed(f, raw);
      return (d) => { const x = read(d); return x !== null && x !== undefined && compareWith(filter.op, cmp(x, v)); };
    }
  }
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
/** jsonb's `@>` for a scalar candidate: the value itself, or an element of an array (data/where.ts). */
const holds = (x: unknown, c: unknown) => sameJson(x, c) || (Array.isArray(x) && x.some((e) => sameJson(e, c)));

/** An undeclared field: loose comparison (values.ts), on the JSON value. */
function looseTest(f: FieldRef, filter: Filter): Match {
  const read = reader(f);
  const raw = filter.values[0] ?? '';
  const candidates = (r: string) => elementCandidates(f, r).map((c) => JSON.parse(c) as unknown);
  switch (filter.op) {
    case 'exists': {
      const want = raw === 'true';
      return (d) => (read(d) !== undefined) === want;
    }
    case 'eq': {
      const cs = candidates(raw);
      return (d) => { const x = read(d); return x !== undefined && cs.some((c) => holds(x, c)); };
    }
    case 'ne': {
      const cs = candidates(raw);
      return (d) => { const x = read(d); return x === undefined || !cs.some((c) => holds(x, c)); };
    }
    case 'in': {
      const cs = filter.values.flatMap(candidates);
      return (d) => { const x = read(d); return x !== undefined && cs.some((c) => holds(x, c)); };
    }
    default: {
      // a numeric-looking value compares with stored numbers, anything else with stored strings
      if (isNumeric(raw)) {
        const v = Number(raw);
        return (d) => { const x = read(d); return typeof x === 'number' && compareWith(filter.op, x - v); };
      }
      return (d) => { const x = read(d); return typeof x === 'string' && compareWith(filter.op, byteOrder(x, raw)); };
    }
  }
}

/** Compiles a subscription's filters (400 invalid_query for what the list would refuse, or `_regex`). */
export function compileFilters(col: CollectionDef, filters: Filter[]): Match {
  const tests = filters.map((filter) => {
    if (filter.op === 'regex') throw DataErrors.invalid_query(`Realtime filters do not support _regex ('${filter.field}').`);
    const f = resolveField(col, filter.field);
    return f.kind === 'loose' ? looseTest(f, filter) : typedTest(f, filter);
  });
  return (doc) => tests.every((t) => t(doc));
}
