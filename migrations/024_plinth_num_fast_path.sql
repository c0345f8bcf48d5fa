-- Up Migration
-- plinth_num reads a list's range filters once per row visited (a page of 20 walks ~40 rows, two
-- calls each), so its cost is a list's cost: 1.0–1.1 µs a call, mostly two numeric conversions
-- and the range tests on them. Nearly every JSON number is short: its text (`doc ->> key`, what
-- numeric_out gives) under 300 characters means |x| < 1e299 and x = 0 or |x| >= 1e-298, so
-- float8in can neither overflow nor underflow and the text converts directly, which is exactly
-- what `(doc -> key)::float8` does (numeric → text → float8). Longer texts take the previous
-- expression unchanged (migration 012). The result is the same for every input, so the indexes
-- built with the function stay right (test: db/leakproof-accessors compares the two over
-- boundary values); 0.6 µs a call, a list's PostgreSQL time ~0.30 → ~0.26 ms in pgbench.
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
        RETURN CASE WHEN jsonb_typeof(doc -> key) = 'number' AND length(doc ->> key) < 300 THEN (doc ->> key)::float8
                    WHEN jsonb_typeof(doc -> key) = 'number' AND abs((doc -> key)::numeric) < 1e308 THEN
                      CASE WHEN abs((doc -> key)::numeric) >= 1e-300 THEN (doc -> key)::float8
                           WHEN abs((doc -> key)::numeric) * 2::numeric ^ 1075 <= 1 THEN 0
                           ELSE (doc -> key)::float8 END
               END;
      END $b$ $f$, leak);
END
$do$;
