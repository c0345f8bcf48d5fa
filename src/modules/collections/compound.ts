/**
 * Developer-declared compound indexes (`indexes: [{ fields: ["category", "price"] }]` on a
 * collection). Only declared top-level fields of an indexable type may be listed, because the
 * index is built on the same accessor expressions the query builder emits for them.
 */
import type { FieldDef } from '../../db/types.js';
import { isPlainObject } from '../../lib/objects.js';
import { SCALAR_TYPES } from './fields.js';

export const COMPOUND_INDEXES_MAX = 8;
export const FIELDS_MIN = 2;
export const FIELDS_MAX = 4;

function checkOne(raw: unknown, byKey: Map<string, FieldDef>, seen: Set<string>): string | null {
  if (!isPlainObject(raw) || !Array.isArray(raw.fields) || Object.keys(raw).some((k) => k !== 'fields')) {
    return 'Each index must be an object { fields: [field, ...] }.';
  }
  const fields: unknown[] = raw.fields;
  if (fields.length < FIELDS_MIN || fields.length > FIELDS_MAX) return `An index lists ${FIELDS_MIN} to ${FIELDS_MAX} fields.`;
  for (const f of fields) {
    const def = typeof f === 'string' ? byKey.get(f) : undefined;
    if (!def || !SCALAR_TYPES.has(def.type) || def.hidden) {
      return `Index field '${String(f)}' must be a declared top-level String, Number, Boolean, Date or Ref field, not hidden.`;
    }
  }
  if (new Set(fields).size !== fields.length) return 'An index lists each field once.';
  const key = fields.join('\u0000');
  if (seen.has(key)) return `Index [${fields.join(', ')}] is declared twice.`;
  seen.add(key);
  return null;
}

/** The reason an index list is invalid for these fields, or null. */
export function validateCompoundIndexes(indexes: unknown, fields: FieldDef[]): string | null {
  if (!Array.isArray(indexes)) return "'indexes' must be an array.";
  if (indexes.length > COMPOUND_INDEXES_MAX) return `At most ${COMPOUND_INDEXES_MAX} compound indexes per collection.`;
  const byKey = new Map(fields.map((f) => [f.key, f]));
  const seen = new Set<string>();
  for (const raw of indexes) {
    const problem = checkOne(raw, byKey, seen);
    if (problem) return problem;
  }
  return null;
}
