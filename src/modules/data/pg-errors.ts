/**
 * PostgreSQL errors a client can cause, mapped to their 4xx answers: unique violations (409), a value too long for an index entry (400),
 * a pattern PostgreSQL's regex engine rejects (400), a statement timeout (400), a value it
 * cannot parse or store, such as a NUL character in a query value (400), a write to a
 * collection deleted meanwhile (404). Anything else
 * stays an internal error (logged, never shown).
 */
import { isDroppedPartition, isMissingPartition, isUniqueViolation, isUnstorableText, READ_ONLY_FIELD, sqlState } from '../../db/errors.js';
import { DataErrors } from './errors.js';
import { CollectionErrors } from '../collections/errors.js';
import { RuleErrors } from '../rules/errors.js';

/**
 * Invalid text, datetime, range and time zone displacement (a year JavaScript accepts but
 * timestamptz does not, e.g. 275760); plus text it cannot store (isUnstorableText).
 */
const BAD_VALUE = new Set(['22P02', '22007', '22008', '22009', '22003']);

function mapPgError(err: unknown): unknown {
  const code = sqlState(err);
  if (typeof code !== 'string') return err;
  if (isUniqueViolation(err)) return DataErrors.duplicate_value();
  // A write routed to no partition: the collection was deleted after the request looked it up.
  if (isMissingPartition(err) || isDroppedPartition(err)) return CollectionErrors.collection_not_found();
  if (code === '2201B') return DataErrors.invalid_query('Invalid regex pattern.');
  // 54000 from a B-tree: the value does not fit an index entry (about a third of an 8 kB page).
  if (code === '54000') return DataErrors.value_too_long();
  if (code === '57014') return DataErrors.query_timeout();
  // The field protection trigger (sql/21_field_protection.sql): a read-only field set by a client.
  if (code === READ_ONLY_FIELD) return DataErrors.field_read_only(`Field '${(err as { column?: string }).column ?? ''}' is read-only: only the secret key may set or change it.`);
  // A loop of lookups saved before they were refused (rules/cycles.ts): the rules' fault, not the caller's.
  if (code === '42P17') return RuleErrors.rule_cycle();
  // A new row an access rule's WITH CHECK refuses (docs/rules.md): the rule said no.
  if (code === '42501' && /row-level security/.test(String((err as Error).message))) return RuleErrors.rule_denied();
  if (BAD_VALUE.has(code) || isUnstorableText(err)) return DataErrors.invalid_query('Invalid value in query.');
  return err;
}

export async function guardDb<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapPgError(err);
  }
}
