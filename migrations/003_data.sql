-- Up Migration
-- Data API: the typed field accessors that per-collection expression indexes are built on,
-- and the indexes every collection shares.
--
-- Why functions: under row-level security PostgreSQL only uses a user condition as an index
-- condition when every function in it is LEAKPROOF (it must not run on rows the policies hide
-- before they are hidden). The built-in jsonb operators are not marked leakproof, so
-- `data->>'city' = $1` could never use an index on the documents table. These two accessors
-- cannot fail or reveal anything for any input, are declared LEAKPROOF, and are written in
-- plpgsql so the planner does not inline them back into the leaky operators. The generated
-- SQL (src/modules/data/expressions.ts) uses exactly these expressions, so the indexes match.
-- Creating a LEAKPROOF function needs a superuser; without one they are created without the
-- flag (still correct, indexes then only serve sorting).

DO $do$
DECLARE
  leak text := 'LEAKPROOF';
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    leak := '';
  END IF;
  EXECUTE format($f$
    CREATE FUNCTION plinth_txt(doc jsonb, key text) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE %s
      AS $b$ BEGIN RETURN doc ->> key; END $b$ $f$, leak);
  -- Numbers as float8 (JSON numbers are doubles; float8 comparison is leakproof, numeric's is
  -- not). Non-numbers and out-of-range values give NULL instead of an error.
  EXECUTE format($f$
    CREATE FUNCTION plinth_num(doc jsonb, key text) RETURNS float8
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE %s
      AS $b$ BEGIN
        RETURN CASE WHEN jsonb_typeof(doc -> key) = 'number' AND abs((doc -> key)::numeric) < 1e308
                    THEN (doc -> key)::float8 END;
      END $b$ $f$, leak);
END
$do$;

GRANT EXECUTE ON FUNCTION plinth_txt(jsonb, text), plinth_num(jsonb, text) TO plinth_api;

-- Private-mode lists: the caller's rows, newest first.
CREATE INDEX documents_owner_idx ON documents (collection_id, owner_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL AND owner_id IS NOT NULL;
