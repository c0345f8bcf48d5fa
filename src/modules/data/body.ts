/**
 * Request-body hygiene for documents: no prototype keys, no `$` operators, system fields owned
 * by the server (nesting is bounded for every JSON body by src/plugins/json-body.ts); and dot-notation merges (`{"meta.views": 3}` updates
 * only that inner key, and never walks through a non-object).
 */
import { isPlainObject } from '../../lib/objects.js';
import { FORBIDDEN_KEYS, SYSTEM_FIELDS } from '../collections/fields.js';
import { DataErrors } from './errors.js';

function badKey(key: string): boolean {
  return key.startsWith('$') || FORBIDDEN_KEYS.has(key);
}

/** PostgreSQL text and jsonb cannot hold U+0000. */
const NUL = '\u0000';

/** Throws 400 on `__proto__`/`constructor`/`$` keys at any depth, or a NUL character in a key or string. */
export function assertSafe(value: unknown): void {
  if (typeof value === 'string') {
    if (value.includes(NUL)) throw DataErrors.invalid_body('Strings may not contain the NUL character.');
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) assertSafe(v);
    return;
  }
  if (!isPlainObject(value)) return;
  for (const key of Object.keys(value)) {
    if (badKey(key) || key.includes(NUL)) throw DataErrors.invalid_body(`Key '${key}' is not allowed.`);
    assertSafe(value[key]);
  }
}

/** A copy without the system fields a client may echo back (`_id`, timestamps, flags). */
export function withoutSystemFields(doc: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) if (!SYSTEM_FIELDS.has(k)) out[k] = v;
  return out;
}

/** Splits and checks a dotted key: every segment non-empty and safe. */
function pathOf(key: string): string[] {
  const parts = key.split('.');
  for (const p of parts) {
    if (p === '' || badKey(p)) throw DataErrors.invalid_body(`Invalid field path '${key}'.`);
  }
  return parts;
}

/**
 * Applies an update body onto a stored document: plain keys replace, dotted keys set one inner
 * key (creating missing objects). Returns the merged document and the touched top-level keys.
 */
export function mergeUpdate(stored: Record<string, unknown>, body: Record<string, unknown>) {
  const doc: Record<string, unknown> = structuredClone(stored);
  const touched = new Set<string>();
  for (const [key, value] of Object.entries(body)) {
    const path = pathOf(key);
    if (path.length === 1 && SYSTEM_FIELDS.has(key)) continue;
    if (SYSTEM_FIELDS.has(path[0]!)) throw DataErrors.invalid_body(`Field '${path[0]}' is managed by the server.`);
    touched.add(path[0]!);
    let node = doc;
    for (let i = 0; i < path.length - 1; i++) {
      const seg = path[i]!;
      const next = node[seg];
      if (next === undefined || next === null) node[seg] = {};
      else if (!isPlainObject(next)) throw DataErrors.invalid_body(`Cannot set '${key}': '${path.slice(0, i + 1).join('.')}' is not an object.`);
      node = node[seg] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = value;
  }
  return { doc, touched };
}
