/**
 * Query-string values → typed SQL values for one field. Declared fields take their declared
 * type (a wrong value is 400); undeclared ones compare loosely: a numeric-looking value also
 * matches numbers, "true"/"false" also match booleans.
 */
import { sql, type RawBuilder } from 'kysely';
import { isObjectId } from '../../lib/ids.js';
import { DataErrors } from './errors.js';
import type { FieldRef } from './fields.js';

const NUMERIC = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

const bad = (f: FieldRef, expected: string) =>
  DataErrors.invalid_query(`Invalid value for '${f.name}': expected ${expected}.`);

export function isNumeric(v: string): boolean {
  return NUMERIC.test(v.trim()) && Number.isFinite(Number(v));
}

/** One value, typed for a comparison with `f.expr` (not for 'loose' fields). */
export function typedValue(f: FieldRef, raw: string): RawBuilder<unknown> {
  switch (f.kind) {
    case 'num':
      if (!isNumeric(raw)) throw bad(f, 'a number');
      return sql`${Number(raw)}::float8`;
    case 'ts': {
      const d = new Date(raw);
      if (raw.trim() === '' || Number.isNaN(d.getTime())) throw bad(f, 'a date');
      return sql`${d.toISOString()}::timestamptz`;
    }
    case 'id':
      if (!isObjectId(raw)) throw bad(f, 'an ObjectId');
      return sql`${raw}::text`;
    case 'bool':
      if (raw !== 'true' && raw !== 'false') throw bad(f, 'true or false');
      return sql`${raw === 'true'}::boolean`;
    default:
      return sql`${declaredText(f, raw)}::text`;
  }
}

/** Text-stored declared fields: dates normalised like stored ones, refs and booleans checked. */
function declaredText(f: FieldRef, raw: string): string {
  if (f.declared === 'Date') {
    const d = new Date(raw);
    if (raw.trim() === '' || Number.isNaN(d.getTime())) throw bad(f, 'a date');
    return d.toISOString();
  }
  if (f.declared === 'Ref' && !isObjectId(raw)) throw bad(f, 'an ObjectId');
  if (f.declared === 'Boolean' && raw !== 'true' && raw !== 'false') throw bad(f, 'true or false');
  return raw;
}

/** jsonb candidates an undeclared field's value may equal. */
export function looseCandidates(raw: string): string[] {
  const out = [JSON.stringify(raw)];
  if (isNumeric(raw)) out.push(JSON.stringify(Number(raw)));
  if (raw === 'true' || raw === 'false') out.push(raw);
  if (raw === 'null') out.push('null');
  return out;
}

export function typedArray(f: FieldRef, raws: string[]): RawBuilder<unknown> {
  const cast = { num: 'float8', ts: 'timestamptz', id: 'text', bool: 'boolean', txt: 'text', loose: 'jsonb' }[f.kind];
  const items = raws.map((r) => {
    if (f.kind === 'num') return typedNumber(f, r);
    if (f.kind === 'ts') return typedDate(f, r);
    if (f.kind === 'id' && !isObjectId(r)) throw bad(f, 'an ObjectId');
    if (f.kind === 'bool' && r !== 'true' && r !== 'false') throw bad(f, 'true or false');
    return f.kind === 'txt' ? declaredText(f, r) : r;
  });
  return sql`${items}::${sql.raw(cast)}[]`;
}

function typedNumber(f: FieldRef, r: string): number {
  if (!isNumeric(r)) throw bad(f, 'a number');
  return Number(r);
}

function typedDate(f: FieldRef, r: string): string {
  const d = new Date(r);
  if (r.trim() === '' || Number.isNaN(d.getTime())) throw bad(f, 'a date');
  return d.toISOString();
}
