-- Up Migration
-- Field protection (docs/rules.md, "Field protection"): a declared top-level field may be
-- `hidden` ("owner": returned to the document's owner and the secret key; "secret": to the
-- secret key only) or `readOnly` (set and changed with the secret key only).
--
-- Hidden values are not kept in `data`: the partition's BEFORE trigger `dp_<collectionId>`
-- (sql/21_field_protection.sql) moves them into `private` (owner-visible) or `secret`, two
-- columns the publishable role has no privilege on. So raw SQL in a publishable scope cannot
-- read them (permission denied), and every path that reads `data` (lists, search, aggregates,
-- the change stream, webhooks) never carries them. The owner gets theirs back through
-- plinth_own_private(), a SECURITY DEFINER function that checks the row is theirs.
--
-- Privileges therefore become per role: plinth_api_full gets the tables, plinth_api_publishable
-- every column but `private` and `secret` (a column added later must be granted to it too).
-- The parent here; each partition in plinth_grant_documents() (sql/20), which the first start
-- after this migration applies to existing partitions in batches (src/db/migrate.ts).
ALTER TABLE documents ADD COLUMN private jsonb, ADD COLUMN secret jsonb;

DO $do$
DECLARE
  cols text;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute
   WHERE attrelid = 'documents'::regclass AND attnum > 0 AND NOT attisdropped AND attname NOT IN ('private', 'secret');
  REVOKE SELECT, INSERT, UPDATE, DELETE ON documents FROM plinth_api;
  GRANT SELECT, INSERT, UPDATE, DELETE ON documents TO plinth_api_full;
  EXECUTE format('GRANT SELECT (%1$s), INSERT (%1$s), UPDATE (%1$s) ON documents TO plinth_api_publishable', cols);
  GRANT DELETE ON documents TO plinth_api_publishable;
END
$do$;
