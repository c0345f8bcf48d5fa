/**
 * Document validation against a collection schema (docs/wire-compatibility.md §4.3). Each schema is compiled
 * once into a tree of small checker closures, cached by a stable key of its fields, so a
 * request only runs the checks, never re-reads the definitions.
 *
 * Insert: every declared field is checked, missing optional fields take their default,
 * required ones must be present. Update: only declared keys present in the body are checked.
 * Strings are trimmed, dates normalised to ISO strings (so stored dates compare and sort as
 * text). Undeclared fields pass through unchanged.
 */
import { isPlainObject } from '../../lib/objects.js';
import type { FieldDef } from '../../db/types.js';
import { isObjectId } from '../../lib/ids.js';

export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };
export type Mode = 'insert' | 'update';

/** Returns the normalised value, or throws a Failure with the SDK's text (docs/wire-compatibility.md §4.3). */
type Check = (value: unknown, label: string, mode: Mode) => unknown;

class Failure {
  constructor(readonly message: string) {}
}

const fail = (label: string, what: string): never => {
  throw new Failure(`Field '${label}' must be ${what}.`);
};


function dateValue(v: unknown, label: string): string {
  if (typeof v !== 'string' && typeof v !== 'number') return fail(label, 'a valid Date');
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return fail(label, 'a valid Date');
  return d.toISOString();
}

function compileType(type: FieldDef['type'], def: Pick<FieldDef, 'fields' | 'items'>): Check {
  switch (type) {
    case 'String':
      return (v, label) => (typeof v === 'string' ? v.trim() : fail(label, 'a String'));
    case 'Number':
      return (v, label) => (typeof v === 'number' && Number.isFinite(v) ? v : fail(label, 'a Number'));
    case 'Boolean':
      return (v, label) => (typeof v === 'boolean' ? v : fail(label, 'a Boolean'));
    case 'Date':
      return (v, label) => dateValue(v, label);
    case 'Ref':
      return (v, label) => (isObjectId(v) ? v : fail(label, 'a valid reference ID (ObjectId)'));
    case 'Object': {
      const inner = compileFields(def.fields ?? []);
      // A nested object is written whole, so its own required fields always apply.
      return (v, label) => (isPlainObject(v) ? inner(v, 'insert') : fail(label, 'an Object'));
    }
    case 'Array': {
      const items = def.items;
      const item = items ? compileType(items.type, items) : (x: unknown) => x;
      return (v, label, mode) => {
        if (!Array.isArray(v)) return fail(label, 'an Array');
        return v.map((x, i) => item(x, `${label}[${i}]`, mode));
      };
    }
  }
}

type ObjectCheck = (doc: Record<string, unknown>, mode: Mode) => Record<string, unknown>;

/** A String or Number field with allowed values: the typed value must then be one of them. */
function compileField(f: FieldDef): Check {
  const check = compileType(f.type, f);
  if (!Array.isArray(f.enum)) return check;
  const allowed = new Set<unknown>(f.enum);
  const list = f.enum.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
  return (v, label, mode) => {
    const value = check(v, label, mode);
    return allowed.has(value) ? value : fail(label, `one of ${list}`);
  };
}

function compileFields(fields: FieldDef[]): ObjectCheck {
  const checks = fields.map((f) => ({ f, check: compileField(f) }));
  return (doc, mode) => {
    const out: Record<string, unknown> = { ...doc };
    for (const { f, check } of checks) {
      const present = Object.prototype.hasOwnProperty.call(doc, f.key);
      const v = present ? doc[f.key] : undefined;
      if (v === undefined || v === null) {
        if (mode === 'update') {
          if (present && f.required) throw new Failure(`Field '${f.key}' is required.`);
          continue;
        }
        if (f.default !== undefined) out[f.key] = f.default;
        else if (f.required) throw new Failure(`Field '${f.key}' is required.`);
        continue;
      }
      out[f.key] = check(v, f.key, mode);
    }
    return out;
  };
}

/**
 * Compiled validators by field list. A collection's list is the same object for as long as the
 * collection cache holds that schema version, so it is compiled once per version per node.
 */
const compiled = new WeakMap<FieldDef[], ObjectCheck>();

function compileSchema(fields: FieldDef[]): ObjectCheck {
  let hit = compiled.get(fields);
  if (!hit) {
    hit = compileFields(fields);
    compiled.set(fields, hit);
  }
  return hit;
}

export function validateDocument(fields: FieldDef[], doc: Record<string, unknown>, mode: 'insert' | 'update'): ValidationResult {
  try {
    return { ok: true, value: compileSchema(fields)(doc, mode) };
  } catch (err) {
    if (err instanceof Failure) return { ok: false, message: err.message };
    throw err;
  }
}
