/**
 * Query-string values → typed SQL values for one field. Declared fields take their declared
 * type (a wrong value is 400); undeclared ones compare loosely: a numeric-looking value also
 * matches numbers, "true"/"false" also match booleans.
 */
import { sql, type RawBuilder } from 'kysely';
import { isObjectId } from '../../lib/ids.js';
import { DataErrors } from './errors.js';
import type { FieldRef, Kind } from './fields.js';

const NUMERIC = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const CAST: Record<Kind, string> = { num: 'float8', ts: 'timestamptz', id: 'text', bool: 'boolean', txt: 'text', loose: 'jsonb' };

const bad = (f: FieldRef, expected: string) =>
  DataErrors.invalid_query(`Invalid value for '${f.name}': expected ${expected}.`);

export function isNumeric(v: string): boolean {
  return NUMERIC.test(v.trim()) && Number.isFinite(Number(v));
}

/**
 * A Date field accepts what a body may carry: an ISO text, or milliseconds since the epoch
 * (`publishedAt_lt=1773600000000`). A 1–4 digit number is a year (`2024`), as `new Date` reads it.
 */
function isoDate(f: FieldRef, raw: string): string {
  const d = /^-?\d{5,}$/.test(raw.trim()) ? new Date(Number(raw)) : new Date(raw);
  if (raw.trim() === '' || Number.isNaN(d.getTime())) throw bad(f, 'a date');
  return d.toISOString();
}

function checkBool(f: FieldRef, raw: string): void {
  if (raw !== 'true' && raw !== 'false') throw bad(f, 'true or false');
}

/** Text-stored declared fields: dates normalised like stored ones, refs and booleans checked. */
function declaredText(f: FieldRef, raw: string): string {
  if (f.declared === 'Date') return isoDate(f, raw);
  if (f.declared === 'Ref' && !isObjectId(raw)) throw bad(f, 'an ObjectId');
  if (f.declared === 'Boolean') checkBool(f, raw);
  return raw;
}

/** One raw value checked and converted for the field's kind (400 when it does not fit). */
export function plain(f: FieldRef, raw: string): string | number | boolean {
  switch (f.kind) {
    case 'num':
      if (!isNumeric(raw)) throw bad(f, 'a number');
      return Number(raw);
    case 'ts':
      return isoDate(f, raw);
    case 'id':
      if (!isObjectId(raw)) throw bad(f, 'an ObjectId');
      return raw;
    case 'bool':
      checkBool(f, raw);
      return raw === 'true';
    default:
      return declaredText(f, raw);
  }
}

/** One value, typed for a comparison with `f.expr` (not for 'loose' fields). */
export function typedValue(f: FieldRef, raw: string): RawBuilder<unknown> {
  return sql`${plain(f, raw)}::${sql.raw(CAST[f.kind])}`;
}

export function typedArray(f: FieldRef, raws: string[]): RawBuilder<unknown> {
  return sql`${raws.map((r) => plain(f, r))}::${sql.raw(CAST[f.kind])}[]`;
}

/**
 * jsonb values an element of a declared Array (or an undeclared value) may equal: the item's
 * declared type decides (a wrong value is 400), undeclared ones compare loosely.
 */
export function elementCandidates(f: FieldRef, raw: string): string[] {
  switch (f.items) {
    case 'String':
      return [JSON.stringify(raw)];
    case 'Number':
      if (!isNumeric(raw)) throw bad(f, 'a number');
      return [JSON.stringify(Number(raw))];
    case 'Boolean':
      checkBool(f, raw);
      return [raw];
    case 'Date':
      return [JSON.stringify(isoDate(f, raw))];
    default:
      return looseCandidates(raw);
  }
}

/** jsonb candidates an undeclared field's value may equal. */
export function looseCandidates(raw: string): string[] {
  const out = [JSON.stringify(raw)];
  if (isNumeric(raw)) out.push(JSON.stringify(Number(raw)));
  if (raw === 'true' || raw === 'false') out.push(raw);
  if (raw === 'null') out.push('null');
  return out;
}
