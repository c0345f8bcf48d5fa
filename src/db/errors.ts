/** Recognising PostgreSQL errors by SQLSTATE, for the few places that turn them into answers. */
export const sqlState = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null ? (err as { code?: unknown }).code as string | undefined : undefined;

/** 23505: a unique index refused the row. */
export const isUniqueViolation = (err: unknown): boolean => sqlState(err) === '23505';

/** 23514 from tuple routing: a row for a documents partition that does not exist (any more). */
export const isMissingPartition = (err: unknown): boolean =>
  sqlState(err) === '23514' && (err as { routine?: unknown }).routine === 'ExecFindPartition';

/** 22021 / 22P05: text PostgreSQL cannot store (a NUL character, an unpaired \u escape). */
export const isUnstorableText = (err: unknown): boolean => ['22021', '22P05'].includes(sqlState(err) ?? '');
