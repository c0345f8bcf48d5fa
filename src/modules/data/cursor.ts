/**
 * Keyset paging: the cursor is opaque base64url JSON `{v, id}` of the last row's first sort
 * value (as PostgreSQL text, so it round-trips exactly) and id. Only the first sort key is
 * used, with `id` as tie-breaker in the same direction. An unreadable cursor, or one that
 * does not fit the sort, starts from the first page (as urBackend does).
 */
import { sql, type RawBuilder } from 'kysely';
import { isObjectId } from '../../lib/ids.js';
import { jsonTooDeep } from '../../lib/json-depth.js';
import type { FieldRef } from './fields.js';

interface CursorValue {
  v: string | null;
  id: string;
}

export function encodeCursor(v: string | null, id: string): string {
  return Buffer.from(JSON.stringify({ v, id })).toString('base64url');
}

function decode(raw: string): CursorValue | null {
  try {
    const text = Buffer.from(raw, 'base64url').toString('utf8');
    if (jsonTooDeep(text)) return null;
    const c = JSON.parse(text) as CursorValue;
    if (!c || !isObjectId(c.id) || (c.v !== null && typeof c.v !== 'string')) return null;
    return c;
  } catch {
    return null;
  }
}

/** The cursor's value as a typed SQL literal for `ref`, or null when it cannot be one. */
function typed(ref: FieldRef, v: string): RawBuilder<unknown> | null {
  switch (ref.kind) {
    case 'ts':
      return Number.isNaN(Date.parse(v)) ? null : sql`${v}::timestamptz`;
    case 'num':
      return /^(-?\d+(\.\d+)?(e[+-]?\d+)?|NaN|-?Infinity)$/i.test(v) ? sql`${v}::float8` : null;
    case 'bool':
      return v === 'true' || v === 'false' ? sql`${v === 'true'}::boolean` : null;
    case 'loose':
      if (jsonTooDeep(v)) return null;
      try {
        JSON.parse(v);
        return sql`${v}::jsonb`;
      } catch {
        return null;
      }
    default:
      return sql`${v}::text`;
  }
}

/** `(expr, id) < (v, id)` (or `>` ascending); null when the cursor is absent or unusable. */
export function keysetCondition(raw: string | undefined, ref: FieldRef, desc: boolean): RawBuilder<unknown> | null {
  if (!raw) return null;
  const c = decode(raw);
  if (!c) return null;
  const op = sql.raw(desc ? '<' : '>');
  if (ref.kind === 'id') return sql`id ${op} ${c.id}::text`;
  if (c.v === null) return null;
  const v = typed(ref, c.v);
  return v ? sql`(${ref.expr}, id) ${op} (${v}, ${c.id}::text)` : null;
}
