/** RLS settings of a collection (docs/wire-compatibility.md §4.5, §10.5): defaults and validated changes. */
import type { FieldDef, RlsConfig } from '../../db/types.js';
import { CollectionErrors } from './errors.js';

export interface RlsInput {
  enabled?: boolean;
  mode?: string;
  ownerField?: string;
  requireAuthForWrite?: boolean;
}

const MODES = new Set(['public-read', 'private', 'owner-write-only']);

/** Owner field chosen at creation: `_id` for users, else userId / ownerId when declared. */
function defaultOwnerField(name: string, fields: FieldDef[]): string {
  if (name.toLowerCase() === 'users') return '_id';
  if (fields.some((f) => f.key === 'userId')) return 'userId';
  if (fields.some((f) => f.key === 'ownerId')) return 'ownerId';
  return 'userId';
}

export function defaultRls(name: string, fields: FieldDef[]): RlsConfig {
  return { enabled: false, mode: 'public-read', ownerField: defaultOwnerField(name, fields), requireAuthForWrite: true };
}

function resolveOwnerField(name: string, fields: FieldDef[], wanted: string): string {
  if (wanted === '_id') {
    if (name.toLowerCase() !== 'users') {
      throw CollectionErrors.invalid_owner_field("Invalid owner field: ownerField '_id' is only allowed for the 'users' collection");
    }
    return '_id';
  }
  const hit = fields.find((f) => f.key.toLowerCase() === wanted.toLowerCase());
  if (!hit) throw CollectionErrors.invalid_owner_field(`ownerField '${wanted}' not found in collection schema`);
  return hit.key;
}

/** Merges a change into the current settings; omitted members keep their values. */
export function applyRlsChange(name: string, fields: FieldDef[], current: RlsConfig, input: RlsInput): RlsConfig {
  const next = { ...current };
  if (input.mode !== undefined) {
    if (!MODES.has(input.mode)) throw CollectionErrors.invalid_rls_mode();
    // The legacy mode behaves exactly as public-read, so it is stored as such.
    next.mode = input.mode === 'private' ? 'private' : 'public-read';
  }
  if (input.enabled !== undefined) next.enabled = input.enabled;
  if (input.requireAuthForWrite !== undefined) next.requireAuthForWrite = input.requireAuthForWrite;
  if (input.ownerField !== undefined) next.ownerField = resolveOwnerField(name, fields, input.ownerField);
  return next;
}
