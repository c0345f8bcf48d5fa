/**
 * Unique fields of the users schema, as the auth flows meet them: a value another user holds
 * is refused by the database (sql/45_auth_unique_values.sql) and answered 409 naming the
 * field; values the user did not choose (derived from the email or the provider profile) are
 * made free with a short random suffix instead, so sign-up never fails over a name the user
 * never typed.
 */
import { randomBytes } from 'node:crypto';
import type { Tx } from '../../db/pool.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AuthErrors } from './errors.js';
import { uniqueValueTaken } from './queries.js';

const CONSTRAINT = 'app_user_unique_values_pkey';

/** For `.catch`: a unique users field refused a value → 409; anything else is rethrown. */
export function rethrowTaken(err: unknown): never {
  if (isUniqueViolation(err) && (err as { constraint?: unknown }).constraint === CONSTRAINT) {
    const field = (err as { column?: unknown }).column;
    throw AuthErrors.field_taken(typeof field === 'string' ? `User already exists with this ${field}.` : undefined);
  }
  throw err;
}

/** Gives each derived string value in `keys` that another user holds a `-xxxx` suffix (in place). */
export async function freeDerivedValues(tx: Tx, projectId: string, data: Record<string, unknown>, keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    const base = data[key];
    if (typeof base !== 'string') continue;
    for (let i = 0; i < 5 && (await uniqueValueTaken(tx, projectId, key, data[key] as string)); i++) {
      data[key] = `${base.slice(0, 45)}-${randomBytes(2).toString('hex')}`;
    }
  }
}
