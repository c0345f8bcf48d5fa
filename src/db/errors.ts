/** Recognising PostgreSQL errors by SQLSTATE, for the few places that turn them into answers. */
import { NETWORK_ERROR_CODES } from '../lib/availability.js';

export const sqlState = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null ? (err as { code?: unknown }).code as string | undefined : undefined;

/** 23505: a unique index refused the row. */
export const isUniqueViolation = (err: unknown): boolean => sqlState(err) === '23505';

/** 23514 from tuple routing: a row for a documents partition that does not exist (any more). */
export const isMissingPartition = (err: unknown): boolean =>
  sqlState(err) === '23514' && (err as { routine?: unknown }).routine === 'ExecFindPartition';

/**
 * 42P01 naming a collection's partition: a read of a collection deleted after the request
 * looked it up (reads name the partition, src/modules/data/queries.ts).
 */
export const isDroppedPartition = (err: unknown): boolean =>
  sqlState(err) === '42P01' && /relation "documents_[0-9a-f]{24}"/.test(String((err as { message?: unknown }).message ?? ''));

/** 22021 / 22P05: text PostgreSQL cannot store (a NUL character, an unpaired \u escape). */
/** Raised by the field protection trigger (sql/21_field_protection.sql), with the field as `column`. */
export const READ_ONLY_FIELD = 'PR403';

export const isUnstorableText = (err: unknown): boolean => ['22021', '22P05'].includes(sqlState(err) ?? '');

/**
 * Marks an error as raised by our PostgreSQL connections (pool.ts tags every failed connect
 * and query), so a socket error such as ECONNREFUSED is only read as "the database is down"
 * when it came from the database, not from S3 or a mail provider.
 */
const FROM_DATABASE = Symbol('plinth.fromDatabase');

export function fromDatabase<E>(err: E): E {
  if (typeof err === 'object' && err !== null) (err as { [FROM_DATABASE]?: boolean })[FROM_DATABASE] = true;
  return err;
}

/**
 * SQLSTATEs that mean the server is going away or not taking connections: class 08
 * (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now
 * (starting up, shutting down, in recovery), 53300 too_many_connections.
 */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);


/** node-postgres's own words for a connection that broke, timed out or was never made. */
const CLIENT_MESSAGES = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout"
  /^timeout exceeded when trying to connect$/, // pool connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

/**
 * True when `err` says the database cannot be reached (down, restarting, refusing, cut off):
 * the request may well succeed in a few seconds, so it is answered 503 with Retry-After.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const state = sqlState(err);
  if (typeof state === 'string' && /^[0-9A-Z]{5}$/.test(state) && (state.startsWith('08') || UNAVAILABLE_STATES.has(state))) return true;
  if (!(err as { [FROM_DATABASE]?: boolean })[FROM_DATABASE]) return false;
  const message = (err as { message?: unknown }).message;
  return (typeof state === 'string' && NETWORK_ERROR_CODES.has(state)) || (typeof message === 'string' && CLIENT_MESSAGES.some((m) => m.test(message)));
}
