/**
 * Resolves a field name of a query (`price`, `meta.views`, `_id`, `createdAt`) to the SQL
 * expression that reads it and how its values are typed.
 *
 * Declared scalar fields read through `plinth_num` / `plinth_txt` (migrations/003_data.sql),
 * which are exactly the expressions the per-collection indexes are built on (for top-level
 * fields), so equality, ranges and sorts on them can use those indexes even under RLS.
 * Undeclared fields are read as jsonb and compared loosely (numbers as numbers, booleans as
 * booleans, else strings). Field names and values always travel as bind parameters.
 */
import { sql, type RawBuilder } from 'kysely';
import type { FieldDef } from '../../db/types.js';
import { FORBIDDEN_KEYS, hasControlChar, SCALAR_TYPES } from '../collections/fields.js';
import type { CollectionDef } from '../collections/cache.js';
import { DataErrors } from './errors.js';

/** How a field's values are typed in SQL. `loose`: undeclared, compared as jsonb. */
export type Kind = 'num' | 'txt' | 'ts' | 'id' | 'bool' | 'loose';

export interface FieldRef {
  name: string;
  kind: Kind;
  /** Declared type when the field is in the schema (String, Date, Ref, Boolean use 'txt'). */
  declared?: FieldDef['type'];
  /** The typed expression (for 'loose': the jsonb value). */
  expr: RawBuilder<unknown>;
  /** The value as text, for `_regex`. */
  text: RawBuilder<unknown>;
  /** Non-null exactly when the field exists (`_exists`). */
  presence: RawBuilder<unknown>;
  /**
   * Top-level non-unique Strings: `plinth_key`, the bounded prefix their index is built on
   * (migrations/025). Equality adds `prefix = left(v, 200)` so the index finds the candidates.
   */
  prefix?: RawBuilder<unknown>;
  /** Declared Arrays: the item type; equality and `_in` then match an element. */
  items?: FieldDef['type'];
}

/** Characters of a String value that plinth_key keeps (migrations/025). */
export const KEY_PREFIX_CHARS = 200;

/** A Map, not an object literal: field names are client text (`constructor`, `toString`...). */
const SYSTEM = new Map<string, { kind: Kind; column: string }>([
  ['_id', { kind: 'id', column: 'id' }],
  ['createdAt', { kind: 'ts', column: 'created_at' }],
  ['updatedAt', { kind: 'ts', column: 'updated_at' }],
  ['deletedAt', { kind: 'ts', column: 'deleted_at' }],
]);

function fieldPath(name: string): string[] {
  const parts = name.split('.');
  if (name.length > 256 || parts.length > 8) throw DataErrors.invalid_query(`Invalid field '${name}'.`);
  for (const p of parts) {
    if (p === '' || p.startsWith('$') || FORBIDDEN_KEYS.has(p) || /\s/.test(p) || hasControlChar(p)) {
      throw DataErrors.invalid_query(`Invalid field '${name}'.`);
    }
  }
  return parts;
}

/** The declared definition at a path (through Object fields), if any. */
function declaredAt(col: CollectionDef, path: string[]): FieldDef | undefined {
  let def = col.byKey.get(path[0]!);
  for (const seg of path.slice(1)) {
    if (!def || def.type !== 'Object') return undefined;
    def = def.fields?.find((f) => f.key === seg);
  }
  return def;
}


export function resolveField(col: CollectionDef, name: string): FieldRef {
  if (name === 'isDeleted') {
    const expr = sql`(deleted_at IS NOT NULL)`;
    return { name, kind: 'bool', expr, text: sql`(deleted_at IS NOT NULL)::text`, presence: sql`true` };
  }
  const sys = SYSTEM.get(name);
  if (sys) {
    const expr = sql.ref(sys.column);
    return { name, kind: sys.kind, expr, text: sql`${expr}::text`, presence: expr };
  }
  const path = fieldPath(name);
  // Hidden values are not in `data` (migrations/040): a condition on them would be an oracle for
  // the publishable key and match nothing for the secret key; say so rather than answer empty.
  if (col.byKey.get(path[0]!)?.hidden) throw DataErrors.field_hidden(`Field '${path[0]}' is hidden: it cannot be filtered, sorted, grouped or aggregated.`);
  const json = path.length === 1 ? sql`(data -> ${path[0]!}::text)` : sql`(data #> ${path}::text[])`;
  const text = path.length === 1 ? sql`(data ->> ${path[0]!}::text)` : sql`(data #>> ${path}::text[])`;
  const def = declaredAt(col, path);
  if (def && SCALAR_TYPES.has(def.type)) {
    // Nested: the same accessor applied to the parent object.
    const parent = path.length === 1 ? sql`data` : sql`(data #> ${path.slice(0, -1)}::text[])`;
    const key = path[path.length - 1]!;
    const expr = def.type === 'Number' ? sql`plinth_num(${parent}, ${key}::text)` : sql`plinth_txt(${parent}, ${key}::text)`;
    const ref: FieldRef = { name, kind: def.type === 'Number' ? 'num' : 'txt', declared: def.type, expr, text, presence: json };
    if (def.type === 'String' && !def.unique && path.length === 1) ref.prefix = sql`plinth_key(data, ${key}::text)`;
    return ref;
  }
  const ref: FieldRef = { name, kind: 'loose', expr: json, text, presence: json };
  if (def?.type === 'Array' && def.items) ref.items = def.items.type;
  return ref;
}
