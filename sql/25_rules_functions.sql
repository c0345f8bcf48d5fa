-- What access rules (docs/rules.md) read of the caller beyond the scope settings: `@auth.<field>`
-- is a field of the signed-in end user's row in app_users, of the scoped project only.
-- SECURITY DEFINER: the users collection's rules may hide the caller's row from the publishable
-- role, which never reads password_hash (sql/40, migrations/063); this
-- returns only the caller's own row (never the password hash), NULL without a signed-in user.
-- The compiled rules call it as a scalar sub-select, so it runs once per statement.
CREATE OR REPLACE FUNCTION plinth_auth_user() RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
  SELECT u.data - 'password' || jsonb_build_object('id', u.id, 'email', u.email, 'verified', u.email_verified)
  FROM app_users u
  WHERE u.id = plinth_user_id() AND u.project_id = plinth_project_id()
$$;
REVOKE ALL ON FUNCTION plinth_auth_user() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION plinth_auth_user() TO plinth_api;

-- `@auth.claims.<name>` (docs/rules.md): the custom claims of the caller's verified access token
-- (what the project's token-claims function put under `claims`), which src/db/pool.ts sets as
-- `plinth.claims` (transaction-local, only from a token the server verified, only with a user).
-- NULL without claims: a scope that carries none never sets the setting, which then reads '' or
-- nothing. The compiled rules call it as a scalar sub-select, so it is parsed once per statement.
CREATE OR REPLACE FUNCTION plinth_claims() RETURNS jsonb LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT nullif(current_setting('plinth.claims', true), '')::jsonb
$$;
