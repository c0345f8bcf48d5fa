-- Helpers the row-level-security policies use. Re-applied on every start (idempotent).
-- The settings are transaction-local: set by db.tenant() in src/db/pool.ts.

CREATE OR REPLACE FUNCTION plinth_project_id() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('plinth.project_id', true), '')
$$;

CREATE OR REPLACE FUNCTION plinth_user_id() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('plinth.user_id', true), '')
$$;

-- 'secret', 'publishable', 'operator' or 'system'; NULL outside a tenant transaction.
CREATE OR REPLACE FUNCTION plinth_key_kind() RETURNS text LANGUAGE sql STABLE AS $$
  SELECT nullif(current_setting('plinth.key_kind', true), '')
$$;
