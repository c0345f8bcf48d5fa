/**
 * A collection's RLS settings as the archive carries them, checked and split for the import.
 *
 * The owner field is restored exactly as it was, declared in the schema or not: the API itself
 * stores undeclared ones (a collection created without a `userId` field gets the default owner
 * field `userId`; a schema change may drop or rename the field RLS names), so the import may not
 * demand what a create through the API demands, or an ordinary project would not restore
 * (issue 32 item 2). What the API can never store is still refused: `_id` outside `users`, a
 * name no field could have, an unknown mode, members of the wrong type.
 */
import type { FieldDef, RlsConfig } from '../../db/types.js';
import type { RlsInput } from '../collections/rls.js';
import { FORBIDDEN_KEYS, hasControlChar, SYSTEM_FIELDS } from '../collections/fields.js';
import { isPlainObject } from '../../lib/objects.js';
import { BackupErrors } from './errors.js';

export interface ArchivedRls {
  /** What the collection create validates as usual (mode, flags, a declared owner field). */
  input: RlsInput;
  /** The owner field to store when the create did not (undeclared in the schema). */
  ownerField: string;
}

const MODES = new Set(['public-read', 'private']);

/** A name a field key could have (fields.ts), or `_id` for the users collection. */
function ownerFieldProblem(collection: string, field: unknown): string | null {
  if (typeof field !== 'string' || field.length < 1 || field.length > 128) return 'ownerField must be 1-128 characters';
  if (field === '_id') return collection.toLowerCase() === 'users' ? null : "ownerField '_id' is only allowed for the 'users' collection";
  if (field.startsWith('$') || field.includes('.') || /\s/.test(field) || hasControlChar(field) || FORBIDDEN_KEYS.has(field) || SYSTEM_FIELDS.has(field)) {
    return `ownerField '${field}' is not a field name`;
  }
  return null;
}

export function archivedRls(collection: string, fields: FieldDef[], raw: unknown, line: number): ArchivedRls {
  const bad = (why: string) => BackupErrors.invalid_archive(`Line ${line} (collection ${collection}): ${why}.`);
  if (!isPlainObject(raw)) throw bad('rls must be an object');
  const { enabled, mode, ownerField, requireAuthForWrite } = raw as Partial<Record<keyof RlsConfig, unknown>>;
  if (typeof enabled !== 'boolean' || typeof requireAuthForWrite !== 'boolean') throw bad('rls needs the booleans enabled and requireAuthForWrite');
  if (typeof mode !== 'string' || !MODES.has(mode)) throw bad('rls mode must be public-read or private');
  const problem = ownerFieldProblem(collection, ownerField);
  if (problem) throw bad(problem);
  const field = ownerField as string;
  const declared = field === '_id' || fields.some((f) => isPlainObject(f) && f.key === field);
  return { input: { enabled, mode, requireAuthForWrite, ...(declared ? { ownerField: field } : {}) }, ownerField: field };
}
