/**
 * The list-query grammar of docs/wire-compatibility.md §5.1, as a validator for a model's structured answer:
 * `{filters:[{field, op, value}], sort:[{field, order}], limit}`. Every field must exist in the
 * collection (or be a system field), every operator must suit the field's type, every value
 * must have the field's type. What comes out is rebuilt from checked parts only.
 */
import type { FieldDef } from '../../db/types.js';
import { isPlainObject } from '../../lib/objects.js';
import { cleanText, hasControlChars, type Json } from './output.js';
import { checkValue, QueryRejected, type FieldType } from './query-values.js';

export { QueryRejected };

export type Op = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'exists' | 'regex';

/** Query-parameter suffix of each operator (equality has none). */
const SUFFIX: Record<Op, string> = {
  eq: '', ne: '_ne', gt: '_gt', gte: '_gte', lt: '_lt', lte: '_lte', in: '_in', exists: '_exists', regex: '_regex',
};

/** Parameters the data API never reads as filters (docs/wire-compatibility.md §5.1 plus Plinth's additions). */
const RESERVED_PARAMS = new Set([
  'page', 'sort', 'limit', 'fields', 'populate', 'expand', 'count', 'meta', 'cursor', 'include_deleted', 'include_total', 'skip', 'key', 'x-api-key',
]);

const COMPARE: Op[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'exists'];
const OPS: Record<FieldType, Op[]> = {
  String: [...COMPARE, 'regex'],
  Number: COMPARE,
  Date: COMPARE,
  Boolean: ['eq', 'ne', 'exists'],
  Ref: ['eq', 'ne', 'in', 'exists'],
  Object: ['exists'],
  Array: ['exists'],
};
/** The data API compares an Array as a whole; only presence and a regex over its text are meaningful. */
const ARRAY_OPS: Op[] = ['exists', 'regex'];

export interface QueryField {
  name: string;
  type: FieldType;
  /** For arrays: the element type (a regex applies to arrays of String). */
  itemsType?: FieldType;
}

export interface ListQuery {
  filters: Record<string, string>;
  sort: string | null;
  limit: number;
}

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
const MAX_FILTERS = 20;
const MAX_SORT = 3;

const SYSTEM_FIELDS: QueryField[] = [
  { name: '_id', type: 'Ref' },
  { name: 'createdAt', type: 'Date' },
  { name: 'updatedAt', type: 'Date' },
];

export function queryFields(fields: FieldDef[]): QueryField[] {
  const own = fields
    .filter((f) => !SYSTEM_FIELDS.some((s) => s.name === f.key))
    .map((f) => ({ name: f.key, type: f.type, itemsType: f.type === 'Array' ? f.items?.type : undefined }));
  return [...SYSTEM_FIELDS, ...own];
}

export function opsFor(field: QueryField): Op[] {
  if (field.type !== 'Array') return OPS[field.type];
  if (!field.itemsType || field.itemsType === 'Object' || field.itemsType === 'Array') return ['exists'];
  return ARRAY_OPS.filter((op) => op === 'exists' || OPS[field.itemsType!].includes(op));
}

const shown = (v: unknown) => `'${cleanText(String(v), 64)}'`;

function fieldNamed(fields: QueryField[], name: unknown, where: string): QueryField {
  if (typeof name !== 'string' || name === '') throw new QueryRejected(`${where} has no field name`);
  const field = fields.find((f) => f.name === name);
  if (!field) throw new QueryRejected(`${where} uses the field ${shown(name)}, which does not exist in this collection`);
  return field;
}

function paramName(field: QueryField, op: Op): string {
  const name = field.name + SUFFIX[op];
  const ambiguous = op === 'eq' && Object.values(SUFFIX).some((s) => s && field.name.endsWith(s));
  if (RESERVED_PARAMS.has(name) || ambiguous || hasControlChars(name)) {
    throw new QueryRejected(`the field ${shown(field.name)} cannot be filtered with '${op}' in a query string`);
  }
  return name;
}

function addFilter(out: Record<string, string>, fields: QueryField[], item: unknown, i: number): void {
  const where = `filter #${i + 1}`;
  if (!isPlainObject(item)) throw new QueryRejected(`${where} is not an object`);
  const extra = Object.keys(item).find((k) => !['field', 'op', 'value'].includes(k));
  if (extra) throw new QueryRejected(`${where} has an unexpected member ${shown(extra)}`);
  const field = fieldNamed(fields, item.field, where);
  const op = item.op as Op;
  if (typeof item.op !== 'string' || !Object.hasOwn(SUFFIX, item.op)) throw new QueryRejected(`${where} uses the unsupported operator ${shown(item.op)}`);
  if (!opsFor(field).includes(op)) throw new QueryRejected(`${where}: operator '${op}' cannot be used on ${field.type} field ${shown(field.name)}`);
  const name = paramName(field, op);
  if (Object.hasOwn(out, name)) throw new QueryRejected(`${where} repeats the '${op}' filter on ${shown(field.name)}`);
  out[name] = checkValue(field, op, item.value, where);
}

function filtersOf(value: unknown, fields: QueryField[]): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!Array.isArray(value)) throw new QueryRejected("'filters' must be an array");
  if (value.length > MAX_FILTERS) throw new QueryRejected(`at most ${MAX_FILTERS} filters are allowed`);
  const out: Record<string, string> = {};
  value.forEach((item, i) => addFilter(out, fields, item, i));
  return out;
}

function sortItem(fields: QueryField[], item: unknown, i: number): string {
  const where = `sort #${i + 1}`;
  if (!isPlainObject(item)) throw new QueryRejected(`${where} is not an object`);
  const field = fieldNamed(fields, item.field, where);
  if (field.type === 'Object' || field.type === 'Array' || /[,:]|^-/.test(field.name)) {
    throw new QueryRejected(`${where}: the field ${shown(field.name)} cannot be sorted on`);
  }
  if (item.order !== 'asc' && item.order !== 'desc') throw new QueryRejected(`${where} has an order other than 'asc' or 'desc'`);
  return item.order === 'desc' ? `-${field.name}` : `${field.name}:asc`;
}

function sortOf(value: unknown, fields: QueryField[]): string | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new QueryRejected("'sort' must be an array");
  if (value.length > MAX_SORT) throw new QueryRejected(`at most ${MAX_SORT} sort keys are allowed`);
  const items = value.map((item, i) => sortItem(fields, item, i));
  const names = items.map((s) => s.replace(/^-/, '').replace(/:asc$/, ''));
  if (new Set(names).size !== names.length) throw new QueryRejected('the sort names a field twice');
  return items.length ? items.join(',') : null;
}

function limitOf(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_LIMIT;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new QueryRejected("'limit' must be a whole number of at least 1");
  return Math.min(value, MAX_LIMIT);
}

const TOP_LEVEL = new Set(['filters', 'sort', 'limit', 'explanation']);

/** Checks a model answer against the collection's fields and the grammar; throws QueryRejected. */
export function validateQuery(answer: Json, fields: QueryField[]): ListQuery {
  const extra = Object.keys(answer).find((k) => !TOP_LEVEL.has(k));
  if (extra) throw new QueryRejected(`the answer has an unexpected member ${shown(extra)}`);
  return { filters: filtersOf(answer.filters, fields), sort: sortOf(answer.sort, fields), limit: limitOf(answer.limit) };
}

/** The query string for GET /api/data/:collection (without the leading '?'). */
export function toQueryString(q: ListQuery): string {
  const pairs = Object.entries(q.filters);
  if (q.sort) pairs.push(['sort', q.sort]);
  pairs.push(['limit', String(q.limit)]);
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}
