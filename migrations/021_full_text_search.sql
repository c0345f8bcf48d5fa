-- Up Migration
-- Full-text search over a collection's String fields marked `searchable` (docs/data.md,
-- "Full-text search"). Each collection has a text search configuration (`simple` by default:
-- lower-cased words, no stemming, so any script works). A searchable collection's documents
-- carry their search vector in `documents.search_vector`, kept by a trigger on the collection's
-- partition (created with the partition's GIN index by src/modules/collections/search-index.ts,
-- with the language and the searchable keys as trigger arguments); other collections pay
-- nothing on write and keep it NULL. Stored, so ranking reads it instead of rebuilding it per row.
ALTER TABLE collections ADD COLUMN search_language text NOT NULL DEFAULT 'simple';
ALTER TABLE documents ADD COLUMN search_vector tsvector;

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

-- The vector of a document: its searchable strings, folded, capped so that to_tsvector cannot
-- fail on any document (its limit is 1 MB of lexemes). plinth_fold is named with its schema:
-- maintenance commands run with a search_path of pg_catalog only (PostgreSQL 17).
DO $do$
BEGIN
  EXECUTE format($f$
    CREATE FUNCTION plinth_tsv(doc jsonb, keys text[], lang regconfig) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
      AS $b$ BEGIN
        RETURN to_tsvector(lang, %1$I.plinth_fold(left(array_to_string(
          ARRAY(SELECT doc ->> k FROM unnest(keys) AS k WHERE jsonb_typeof(doc -> k) = 'string'), ' '), 200000)));
      END $b$ $f$, current_schema());
  -- Trigger arguments: the language, then the searchable keys.
  EXECUTE format($f$
    CREATE FUNCTION plinth_search_vector() RETURNS trigger LANGUAGE plpgsql
      AS $b$ BEGIN
        NEW.search_vector := %1$I.plinth_tsv(NEW.data, TG_ARGV[1:TG_NARGS - 1], TG_ARGV[0]::regconfig);
        RETURN NEW;
      END $b$ $f$, current_schema());
END
$do$;

-- Under row-level security PostgreSQL uses a condition as an index condition only when its
-- functions are LEAKPROOF (migrations/003). The match operator `@@` (ts_match_vq) only compares
-- a vector with a query and raises no data-dependent error: marked so when we are a superuser.
-- Without it, search still works, by scanning the collection's partition.
DO $do$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION ts_match_vq(tsvector, tsquery) LEAKPROOF;
  END IF;
END
$do$;

GRANT EXECUTE ON FUNCTION plinth_tsv(jsonb, text[], regconfig), plinth_fold(text), plinth_search_vector() TO plinth_api;

-- Down Migration
DROP FUNCTION plinth_search_vector();
DROP FUNCTION plinth_tsv(jsonb, text[], regconfig);
DROP FUNCTION plinth_fold(text);
ALTER TABLE documents DROP COLUMN search_vector;
ALTER TABLE collections DROP COLUMN search_language;
