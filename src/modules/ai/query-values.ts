/**
 * Value checks for the query grammar: a filter value must have the declared type of its field
 * (and suit its operator) before it is written into a query string. Returns the query-string
 * text of the value; throws QueryRejected with a message for the client otherwise.
 */
import type { FieldDef } from '../../db/types.js';
import { isObjectId } from '../../lib/ids.js';
import { hasControlChars } from './output.js';

export type FieldType = FieldDef['type'];

/** A model answer that does not fit the schema or the grammar; the message is for the client. */
export class QueryRejected extends Error {}

export const MAX_REGEX = 128;
const MAX_STRING = 500;
const MAX_IN = 50;
const DECIMAL = /^-?\d+(\.\d+)?$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

interface Target {
  name: string;
  type: FieldType;
  itemsType?: FieldType;
}

function bad(where: string, target: Target, expected: string): never {
  throw new QueryRejected(`${where}: the value for '${target.name}' must be ${expected}`);
}

function scalar(type: FieldType, value: unknown, where: string, target: Target): string {
  switch (type) {
    case 'String':
      if (typeof value !== 'string' || value.length > MAX_STRING || hasControlChars(value)) bad(where, target, `a string of at most ${MAX_STRING} printable characters`);
      return value;
    case 'Number':
      if (typeof value === 'number' && Number.isFinite(value)) return String(value);
      if (typeof value === 'string' && DECIMAL.test(value)) return value;
      return bad(where, target, 'a number');
    case 'Boolean':
      if (value === true || value === 'true') return 'true';
      if (value === false || value === 'false') return 'false';
      return bad(where, target, 'true or false');
    case 'Date':
      if (typeof value !== 'string' || !ISO_DATE.test(value) || Number.isNaN(Date.parse(value))) bad(where, target, 'an ISO 8601 date');
      return new Date(value).toISOString();
    case 'Ref':
      if (!isObjectId(value)) bad(where, target, 'a 24-character hexadecimal id');
      return value;
    default:
      return bad(where, target, 'absent (only "exists" can be used on this field)');
  }
}

function regex(value: unknown, where: string, target: Target): string {
  if (typeof value !== 'string' || value === '' || value.length > MAX_REGEX || hasControlChars(value)) {
    bad(where, target, `a regular expression of 1 to ${MAX_REGEX} characters`);
  }
  try {
    new RegExp(value, 'i');
  } catch {
    bad(where, target, 'a valid regular expression');
  }
  return value;
}

function list(type: FieldType, value: unknown, where: string, target: Target): string {
  if (!Array.isArray(value) || value.length === 0 || value.length > MAX_IN) bad(where, target, `an array of 1 to ${MAX_IN} values`);
  const items = value.map((v) => scalar(type, v, where, target));
  if (items.some((v) => v.includes(',') || v.trim() !== v || v === '')) bad(where, target, 'values without commas or surrounding spaces');
  return items.join(',');
}

/** The query-string text of `value` for a filter `op` on `target`. */
export function checkValue(target: Target, op: string, value: unknown, where: string): string {
  const type = target.type === 'Array' ? (target.itemsType ?? 'Object') : target.type;
  if (op === 'exists') {
    if (value === true || value === 'true') return 'true';
    if (value === false || value === 'false') return 'false';
    return bad(where, target, 'true or false (for "exists")');
  }
  if (op === 'regex') return regex(value, where, target);
  if (op === 'in') return list(type, value, where, target);
  return scalar(type, value, where, target);
}
