/**
 * Field protection (docs/rules.md, "Field protection"): which top-level fields are hidden
 * (`owner`: returned to the document's owner and the secret key; `secret`: to the secret key
 * only) and which are read-only to the publishable key. The partition's trigger enforces both
 * (sql/21_field_protection.sql); this is its argument, and what the data API reads.
 */
import type { FieldDef } from '../../db/types.js';

export interface Protection {
  owner: string[];
  secret: string[];
  /** Read-only field → its default (a new document may carry that), or null. */
  readOnly: Record<string, string | number | boolean | null>;
}

/** The collection's protection, or null when no field is hidden or read-only. */
export function protectionOf(fields: FieldDef[]): Protection | null {
  const owner = fields.filter((f) => f.hidden === 'owner').map((f) => f.key);
  const secret = fields.filter((f) => f.hidden === 'secret').map((f) => f.key);
  // Keys of a validated schema (fields.ts refuses __proto__ and the like), not client text.
  const readOnly = Object.fromEntries(fields.filter((f) => f.readOnly).map((f) => [f.key, f.default ?? null]));
  if (!owner.length && !secret.length && !Object.keys(readOnly).length) return null;
  return { owner, secret, readOnly };
}

export const hasHidden = (fields: FieldDef[]) => fields.some((f) => f.hidden !== undefined);
export const hasOwnerHidden = (fields: FieldDef[]) => fields.some((f) => f.hidden === 'owner');

/** A copy of `data` without the hidden fields the caller may not see (`owner`: unless it is theirs). */
export function withoutHidden(fields: FieldDef[], data: Record<string, unknown>, seesOwnerFields: boolean): Record<string, unknown> {
  if (!hasHidden(fields)) return data;
  const out = { ...data };
  for (const f of fields) if (f.hidden === 'secret' || (f.hidden === 'owner' && !seesOwnerFields)) delete out[f.key];
  return out;
}
