/**
 * Field definitions (docs/wire-compatibility.md §4.2): the rules a collection schema must follow, and the mapping
 * of the public `/api/schemas` form (`name`, any-case `type`) to the internal form.
 */
import { isPlainObject } from '../../lib/objects.js';
import type { FieldDef } from '../../db/types.js';

export const FIELD_TYPES = ['String', 'Number', 'Boolean', 'Date', 'Object', 'Array', 'Ref'] as const;
/** Types with one comparable value: filterable and sortable through an accessor, indexable. */
export const SCALAR_TYPES: ReadonlySet<string> = new Set(['String', 'Number', 'Boolean', 'Date', 'Ref']);
export const COLLECTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** Names a route of the data API takes (lower case; compared case-insensitively). */
export const RESERVED_COLLECTION_NAMES: ReadonlySet<string> = new Set(['batch']);
/** Types a top-level field may declare `index: true` on (Arrays get a GIN index). */
const INDEXABLE_TYPES: ReadonlySet<string> = new Set([...SCALAR_TYPES, 'Array']);
const UNIQUE_TYPES = new Set(['String', 'Number', 'Boolean', 'Date']);
const DEFAULT_TYPES: Record<string, string> = { String: 'string', Number: 'number', Boolean: 'boolean' };
/** Keys that would reach an object's prototype, or that the system fields own. */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
export const SYSTEM_FIELDS = new Set(['_id', 'createdAt', 'updatedAt', 'isDeleted', 'deletedAt', '__v']);
const MAX_FIELDS = 200;

const NESTING_MESSAGE =
  'Invalid field configuration, nesting depth exceeded (max 3 levels), or unique is only supported for top-level primitive fields.';
const DEFAULT_MESSAGE = 'Default value type must match field type, and required fields cannot have defaults';
const UNSTORABLE_MESSAGE = 'Field definitions may not contain NUL or unpaired surrogate characters.';

/** A C0 control character (NUL, tab, newline...): never part of a field key or query path. */
export const hasControlChar = (s: string) => [...s].some((ch) => ch.charCodeAt(0) < 0x20);

function keyProblem(key: unknown): string | null {
  if (typeof key !== 'string' || key.length < 1 || key.length > 128) return 'Field keys must be 1-128 characters.';
  if (key.startsWith('$') || key.includes('.') || /\s/.test(key) || hasControlChar(key)) {
    return `Invalid field key '${key}': it may not start with '$' or contain '.', whitespace or control characters.`;
  }
  if (FORBIDDEN_KEYS.has(key) || SYSTEM_FIELDS.has(key)) return `Field key '${key}' is reserved.`;
  return null;
}

function checkDefault(f: FieldDef): string | null {
  if (f.default === undefined) return null;
  const want = Object.hasOwn(DEFAULT_TYPES, f.type) ? DEFAULT_TYPES[f.type] : undefined;
  if (!want || typeof f.default !== want || f.required) return DEFAULT_MESSAGE;
  if (typeof f.default === 'string' && f.default.includes('\u0000')) return `Field '${f.key}': the default may not contain NUL.`;
  return null;
}

export const MAX_ENUM_VALUES = 100;
const MAX_ENUM_LENGTH = 200;

/**
 * `enum`: the allowed values of a String or Number field, 1 to 100 distinct values of that type
 * (Strings non-empty, trimmed, at most 200 characters, as validation trims what it stores); a
 * default must be one of them.
 */
function checkEnum(f: FieldDef): string | null {
  if (f.enum === undefined) return null;
  if (f.type !== 'String' && f.type !== 'Number') return `Field '${f.key}': only String and Number fields can have allowed values (enum).`;
  if (!Array.isArray(f.enum) || f.enum.length < 1 || f.enum.length > MAX_ENUM_VALUES) {
    return `Field '${f.key}': enum must be a list of 1 to ${MAX_ENUM_VALUES} values.`;
  }
  const seen = new Set<string | number>();
  for (const v of f.enum as unknown[]) {
    const fits = f.type === 'String'
      ? typeof v === 'string' && v.length > 0 && v.length <= MAX_ENUM_LENGTH && v.trim() === v
      : typeof v === 'number' && Number.isFinite(v);
    if (!fits) {
      return f.type === 'String'
        ? `Field '${f.key}': enum values must be non-empty Strings of at most ${MAX_ENUM_LENGTH} characters, without surrounding spaces.`
        : `Field '${f.key}': enum values must be finite Numbers.`;
    }
    if (seen.has(v as string | number)) return `Field '${f.key}': enum values must be distinct.`;
    seen.add(v as string | number);
  }
  if (f.default !== undefined && !seen.has(f.default as string | number)) return `Field '${f.key}': the default must be one of the enum values.`;
  return null;
}

/** `hidden` and `readOnly` (docs/rules.md): top level only; a hidden value is in no index or search. */
function checkProtection(f: FieldDef, depth: number): string | null {
  if (f.readOnly !== undefined && typeof f.readOnly !== 'boolean') return `Field '${f.key}': readOnly must be a boolean.`;
  if (f.hidden === undefined && !f.readOnly) return null;
  if (depth > 1) return `Field '${f.key}': only top-level fields can be hidden or read-only.`;
  if (f.hidden === undefined) return null;
  if (f.hidden !== 'owner' && f.hidden !== 'secret') return `Field '${f.key}': hidden must be "owner" or "secret".`;
  if (f.unique || f.searchable || f.index) return `Field '${f.key}': a hidden field cannot be unique, searchable or indexed.`;
  return null;
}

/** One level of fields; depth 1 is the top level. */
function checkLevel(fields: unknown, depth: number): string | null {
  if (!Array.isArray(fields)) return 'Schema must be an array of fields.';
  if (fields.length > MAX_FIELDS) return `A schema may have at most ${MAX_FIELDS} fields per level.`;
  const seen = new Set<string>();
  for (const raw of fields) {
    if (!isPlainObject(raw)) return 'Each field must be an object.';
    const f = raw as unknown as FieldDef;
    const bad = keyProblem(f.key);
    if (bad) return bad;
    if (seen.has(f.key)) return `Duplicate field key '${f.key}'.`;
    seen.add(f.key);
    if (!FIELD_TYPES.includes(f.type)) return `Field '${f.key}' has an invalid type. Allowed: ${FIELD_TYPES.join(', ')}.`;
    if (f.required !== undefined && typeof f.required !== 'boolean') return `Field '${f.key}': required must be a boolean.`;
    if (f.unique !== undefined && typeof f.unique !== 'boolean') return `Field '${f.key}': unique must be a boolean.`;
    if (f.unique && (depth > 1 || !UNIQUE_TYPES.has(f.type))) return NESTING_MESSAGE;
    if (f.searchable !== undefined && typeof f.searchable !== 'boolean') return `Field '${f.key}': searchable must be a boolean.`;
    if (f.searchable && (depth > 1 || f.type !== 'String')) return `Field '${f.key}': only top-level String fields can be searchable.`;
    if (f.index !== undefined && typeof f.index !== 'boolean') return `Field '${f.key}': index must be a boolean.`;
    if (f.index && (depth > 1 || !INDEXABLE_TYPES.has(f.type))) {
      return `Field '${f.key}': only top-level String, Number, Boolean, Date, Ref and Array fields can be indexed.`;
    }
    const protection = checkProtection(f, depth);
    if (protection) return protection;
    const def = checkDefault(f) ?? checkEnum(f);
    if (def) return def;
    const nested = checkNested(f, depth);
    if (nested) return nested;
  }
  return null;
}

function checkNested(f: FieldDef, depth: number): string | null {
  if (f.type === 'Object') {
    if (depth >= 3) return NESTING_MESSAGE;
    if (!Array.isArray(f.fields) || f.fields.length === 0) return `Field '${f.key}' of type Object needs non-empty fields.`;
    return checkLevel(f.fields, depth + 1);
  }
  if (f.type === 'Array') {
    if (!isPlainObject(f.items)) return `Field '${f.key}' of type Array needs items.`;
    const t = f.items.type;
    if (!FIELD_TYPES.includes(t) || t === 'Array') return `Field '${f.key}': items.type must be a type other than Array.`;
    if (t === 'Object') {
      if (depth >= 3) return NESTING_MESSAGE;
      if (!Array.isArray(f.items.fields) || f.items.fields.length === 0) return `Field '${f.key}': items of type Object need fields.`;
      return checkLevel(f.items.fields, depth + 1);
    }
    if (t === 'Ref') return `Field '${f.key}': arrays of Ref are not supported; use an Array of String.`;
    return null;
  }
  if (f.type === 'Ref' && (typeof f.ref !== 'string' || !COLLECTION_NAME.test(f.ref))) {
    return `Field '${f.key}' of type Ref needs ref (the target collection name).`;
  }
  return null;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** jsonb cannot store U+0000 or a lone surrogate (in a key, a default, an unused `ref`...). */
function unstorable(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || LONE_SURROGATE.test(value);
  if (Array.isArray(value)) return value.some(unstorable);
  return isPlainObject(value) && Object.values(value).some(unstorable);
}

/** The reason a schema is invalid, or null when it follows every rule of docs/wire-compatibility.md §4.2. */
export function validateFieldDefs(fields: unknown): string | null {
  return checkLevel(fields, 1) ?? (unstorable(fields) ? UNSTORABLE_MESSAGE : null);
}

function capitalise(type: unknown): unknown {
  if (typeof type !== 'string') return type;
  const hit = FIELD_TYPES.find((t) => t.toLowerCase() === type.toLowerCase());
  return hit ?? (type.toLowerCase() === 'objectid' ? 'Ref' : type);
}

/**
 * Accepts both forms (internal `key` or public `name`, any-case `type`) and returns the
 * internal form with only the known members; validate the result with `validateFieldDefs`.
 */
export function normaliseFields(fields: unknown): FieldDef[] | unknown {
  if (!Array.isArray(fields)) return fields;
  return fields.map((raw) => {
    if (!isPlainObject(raw)) return raw;
    const out: Record<string, unknown> = { key: raw.key ?? raw.name, type: capitalise(raw.type) };
    for (const k of ['required', 'unique', 'searchable', 'index', 'hidden', 'readOnly', 'default', 'enum', 'ref'] as const) if (raw[k] !== undefined) out[k] = raw[k];
    if (raw.fields !== undefined) out.fields = normaliseFields(raw.fields);
    if (isPlainObject(raw.items)) {
      const items: Record<string, unknown> = { type: capitalise(raw.items.type) };
      if (raw.items.fields !== undefined) items.fields = normaliseFields(raw.items.fields);
      out.items = items;
    }
    return out;
  });
}
