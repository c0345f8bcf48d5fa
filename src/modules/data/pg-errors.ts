/**
 * PostgreSQL errors a client can cause, mapped to their 4xx answers: unique violations (409),
 * a pattern PostgreSQL's regex engine rejects (400), a statement timeout (400). Anything else
 * stays an internal error (logged, never shown).
 */
import { DataErrors } from './errors.js';

interface PgError {
  code?: string;
  constraint?: string;
}

export function mapPgError(err: unknown): unknown {
  const e = err as PgError;
  if (typeof e !== 'object' || e === null || typeof e.code !== 'string') return err;
  if (e.code === '23505') return DataErrors.duplicate_value();
  if (e.code === '2201B') return DataErrors.invalid_query('Invalid regex pattern.');
  if (e.code === '57014') return DataErrors.query_timeout();
  if (e.code === '22P02' || e.code === '22007' || e.code === '22008' || e.code === '22003') {
    return DataErrors.invalid_query('Invalid value in query.');
  }
  return err;
}

export async function guardDb<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapPgError(err);
  }
}
