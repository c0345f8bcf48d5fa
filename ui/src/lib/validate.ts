/**
 * Checks a document against a collection schema in the browser before it is saved, with the
 * server's rules and messages (src/modules/collections/validate.ts): required fields, types,
 * nested Object fields, Array items, Ref ids, allowed values. The server checks again; this only spares a
 * round trip and points at the field.
 */
import type { FieldDef, FieldType } from './types.js';

const OBJECT_ID = /^[0-9a-f]{24}$/;
const SYSTEM = new Set(['_id', 'createdAt', 'updatedAt', 'isDeleted', 'deletedAt', '__v']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function typeError(type: FieldType, label: string): string {
  const what: Record<FieldType, string> = {
    String: 'a String', Number: 'a Number', Boolean: 'a Boolean', Date: 'a valid Date', Object: 'an Object', Array: 'an Array', Ref: 'a valid reference ID (ObjectId)',
  };
  return `Field '${label}' must be ${what[type]}.`;
}

function checkValue(def: Omit<FieldDef, 'key'>, v: unknown, label: string): string | null {
  switch (def.type) {
    case 'String':
      return typeof v === 'string' ? null : typeError('String', label);
    case 'Number':
      return typeof v === 'number' && Number.isFinite(v) ? null : typeError('Number', label);
    case 'Boolean':
      return typeof v === 'boolean' ? null : typeError('Boolean', label);
    case 'Date':
      return (typeof v === 'string' || typeof v === 'number') && !Number.isNaN(new Date(v).getTime()) ? null : typeError('Date', label);
    case 'Ref':
      return typeof v === 'string' && OBJECT_ID.test(v) ? null : typeError('Ref', label);
    case 'Object':
      // Nested fields are named by their own key, as the server does.
      return isObject(v) ? checkFields(def.fields ?? [], v, 'insert') : typeError('Object', label);
    case 'Array': {
      if (!Array.isArray(v)) return typeError('Array', label);
      if (!def.items) return null;
      for (let i = 0; i < v.length; i++) {
        const err = checkValue(def.items, v[i], `${label}[${i}]`);
        if (err) return err;
      }
      return null;
    }
  }
  return null;
}

function checkFields(fields: FieldDef[], doc: Record<string, unknown>, mode: 'insert' | 'update', prefix = ''): string | null {
  for (const f of fields) {
    const label = prefix ? `${prefix}.${f.key}` : f.key;
    const v = doc[f.key];
    if (v === undefined || v === null) {
      if (mode === 'insert' && f.required && f.default === undefined) return `Field '${label}' is required.`;
      // An update may leave a required field out, not clear it (as the server says).
      if (mode === 'update' && f.required && Object.hasOwn(doc, f.key)) return `Field '${label}' is required.`;
      continue;
    }
    const err = checkValue(f, v, label) ?? checkAllowed(f, v, label);
    if (err) return err;
  }
  return null;
}

/** A value outside the field's allowed values (`enum`), named as the server names it. */
export function checkAllowed(f: Omit<FieldDef, 'key'>, v: unknown, label: string): string | null {
  if (!Array.isArray(f.enum)) return null;
  const value = typeof v === 'string' ? v.trim() : v;
  if (f.enum.includes(value as string | number)) return null;
  return `Field '${label}' must be one of ${f.enum.map((x) => (typeof x === 'string' ? `'${x}'` : String(x))).join(', ')}.`;
}

/** null when the document fits the schema, else the first problem. */
export function validateDocument(fields: FieldDef[], doc: unknown, mode: 'insert' | 'update'): string | null {
  if (!isObject(doc)) return 'A document must be a JSON object.';
  for (const k of Object.keys(doc)) if (k.startsWith('$')) return `Field names may not start with '$' (${k}).`;
  return checkFields(fields, doc, mode);
}

/** The document without the system fields the server ignores on writes. */
export function withoutSystem(doc: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(doc).filter(([k]) => !SYSTEM.has(k)));
}

/** A starting document for "New document": required fields with an empty value of their type. */
export function skeleton(fields: FieldDef[]): Record<string, unknown> {
  const empty: Record<FieldType, unknown> = { String: '', Number: 0, Boolean: false, Date: new Date().toISOString(), Object: {}, Array: [], Ref: '' };
  const out: Record<string, unknown> = {};
  for (const f of fields) if (f.required && f.default === undefined) out[f.key] = f.type === 'Object' ? skeleton(f.fields ?? []) : empty[f.type];
  return out;
}
