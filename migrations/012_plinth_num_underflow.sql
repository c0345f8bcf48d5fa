-- Up Migration
-- plinth_num is LEAKPROOF (migrations/003_data.sql): it must not fail for any input, since the
-- planner may run it on rows the policies hide, and an error message would show the value.
-- It did fail for a JSON number so close to zero that float8 rounds it to 0 (|x| <= 2^-1075,
-- e.g. 1e-400: "... is out of range for type double precision"). Such a number now reads as 0.
-- Every other input gives exactly the result it gave before, which matters: existing indexes
-- were built with this function (CREATE OR REPLACE keeps them; a changed result would make
-- them wrong). The extra test runs only for numbers below 1e-300.
DO $do$
DECLARE
  leak text := 'LEAKPROOF';
BEGIN
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    leak := '';
  END IF;
  EXECUTE format($f$
    CREATE OR REPLACE FUNCTION plinth_num(doc jsonb, key text) RETURNS float8
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE %s
      AS $b$ BEGIN
        RETURN CASE WHEN jsonb_typeof(doc -> key) = 'number' AND abs((doc -> key)::numeric) < 1e308 THEN
                 CASE WHEN abs((doc -> key)::numeric) >= 1e-300 THEN (doc -> key)::float8
                      WHEN abs((doc -> key)::numeric) * 2::numeric ^ 1075 <= 1 THEN 0
                      ELSE (doc -> key)::float8 END
               END;
      END $b$ $f$, leak);
END
$do$;
