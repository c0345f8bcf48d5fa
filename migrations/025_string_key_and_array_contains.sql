-- Up Migration
-- Long text in declared String fields (issue: a 5 000-character post was refused).
--
-- Every declared, non-unique String field used to get a B-tree index on its whole value,
-- and a B-tree entry is limited to about 2 700 bytes: a longer body, comment or description
-- was refused with `value_too_long`. Such fields are now indexed on a bounded prefix,
-- plinth_key (the first 200 characters, at most 800 bytes), and the query builder tests
-- equality as `plinth_key(data, k) = left(v, 200) AND plinth_txt(data, k) = v`: the index
-- finds the candidates, the full value decides (src/modules/data/where.ts). Any value up to
-- the document size limit is storable. Unique String fields keep their whole-value index
-- (a unique constraint must compare whole values).
--
-- Like plinth_txt (migrations/003) it is plpgsql, so the planner does not inline it into the
-- leaky operators, and LEAKPROOF when we are a superuser, so it serves index conditions under
-- row-level security. It cannot fail for any input.
DO $do$
DECLARE
  leak text := 'LEAKPROOF';
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    leak := '';
  END IF;
  EXECUTE format($f$
    CREATE FUNCTION plinth_key(doc jsonb, key text) RETURNS text
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE %s
      AS $b$ BEGIN RETURN left(doc ->> key, 200); END $b$ $f$, leak);
END
$do$;

GRANT EXECUTE ON FUNCTION plinth_key(jsonb, text) TO plinth_api;

-- Filters on Array fields match an element (`tags=café`): `data -> 'tags' @> '"café"'`, served
-- by a GIN index (jsonb_path_ops) on fields declared `index: true`. Under row-level security an
-- index condition must be LEAKPROOF; containment (jsonb_contains) compares two jsonb values and
-- raises no data-dependent error, so it is marked so when we are a superuser, as ts_match_vq is
-- (migrations/021). Without it the filter still works, by scanning the collection's partition.
DO $do$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER FUNCTION jsonb_contains(jsonb, jsonb) LEAKPROOF;
  END IF;
END
$do$;

-- Down Migration
DROP FUNCTION plinth_key(jsonb, text);
