/**
 * Documents and app users keep their hidden fields outside `data`: "owner" ones in `private`,
 * "secret" ones in `secret` (migrations/040 and 065, moved there by the triggers of
 * sql/21_field_protection.sql). This is `data` with both merged back, as the secret key, the
 * owner and exports see it. Only roles with privilege on the two columns can run it (the
 * publishable role has none).
 */
export const WHOLE_DATA_SQL = `data || coalesce(private, '{}') || coalesce(secret, '{}')`;

/** The same, named `data`: a select list's column. */
export const WHOLE_DATA_AS_DATA = `${WHOLE_DATA_SQL} AS data`;
