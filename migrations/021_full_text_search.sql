-- Up Migration
-- Full-text search over a collection's String fields marked `searchable` (docs/data.md,
-- "Full-text search"). Each collection has a text search configuration (`simple` by default:
-- lower-cased words, no stemming, so any script works), and a GIN index on its partition over
-- plinth_tsv(data, <searchable keys>, <language>), the expression the query builder emits.
--
-- plinth_tsv names plinth_fold with its schema: ANALYZE and index builds evaluate index
-- expressions with a search_path of pg_catalog only (PostgreSQL 17).
-- Like plinth_txt (migrations/003), plinth_tsv is LEAKPROOF (with a superuser) so that under
-- row-level security the planner may use the index; the text it reads is capped so that
-- to_tsvector cannot fail on any document (its limit is 1 MB of lexemes). The match operator
-- `@@` (ts_match_vq) must be leakproof too for the same reason: it only compares a vector with
-- a query and raises no data-dependent error, so it is marked so when we can. Without a
-- superuser both stay unmarked: search still works, by scanning the collection's partition.
ALTER TABLE collections ADD COLUMN search_language text NOT NULL DEFAULT 'simple';

-- Case folding for every script: PostgreSQL 17's built-in `pg_c_utf8` collation lower-cases
-- by Unicode whatever the database's locale (the embedded cluster's is C, which would fold
-- ASCII only); older servers fold with the database's own collation.
DO $do$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'pg_c_utf8') THEN
    CREATE FUNCTION plinth_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN lower(t COLLATE pg_c_utf8);
  ELSE
    CREATE FUNCTION plinth_fold(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN lower(t);
  END IF;
END
$do$;

DO $do$
DECLARE
  super boolean := (SELECT rolsuper FROM pg_roles WHERE rolname = current_user);
BEGIN
  EXECUTE format($f$
    CREATE FUNCTION plinth_tsv(doc jsonb, keys text[], lang regconfig) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE %s
      AS $b$ BEGIN
        RETURN to_tsvector(lang, %I.plinth_fold(left(array_to_string(
          ARRAY(SELECT doc ->> k FROM unnest(keys) AS k WHERE jsonb_typeof(doc -> k) = 'string'), ' '), 200000)));
      END $b$ $f$, CASE WHEN super THEN 'LEAKPROOF' ELSE '' END, current_schema());
  IF super THEN
    ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
  END IF;
END
$do$;

GRANT EXECUTE ON FUNCTION plinth_tsv(jsonb, text[], regconfig), plinth_fold(text) TO plinth_api;

-- Down Migration
DROP FUNCTION plinth_tsv(jsonb, text[], regconfig);
DROP FUNCTION plinth_fold(text);
ALTER TABLE collections DROP COLUMN search_language;
