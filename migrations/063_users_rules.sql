-- Up Migration
-- Access rules on the users collection (docs/rules.md, "The users collection"). End users are
-- rows of app_users, one table for every project, so their rules become policies of that
-- table (sql/40_auth_policies.sql), per project that sets some. Two changes of roles follow:
--
-- * plinth_api_account: the auth module acting on one account (sign-up, sign-in, refresh,
--   codes, second factors, social sign-in, /me) runs as this role, not as
--   plinth_api_publishable. Signing in finds a user by email before anyone is signed in, which
--   a rule such as `view: id = @auth.id` would hide; so the rules govern the publishable role,
--   the role of raw SQL, populate, lookups and public profiles, and the auth flows, which act
--   only for the user they authenticate (src/modules/auth), keep seeing the project's users.
--   A member of plinth_api (its grants and tenant isolation), like the other two.
-- * Privileges on app_users become per role: plinth_api_full and plinth_api_account the table;
--   plinth_api_publishable reads every column but password_hash and writes only the profile
--   (`data`, `updated_at`), so no rule, and no raw SQL, can ever read a password hash.
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'plinth_api_account') THEN
    CREATE ROLE plinth_api_account NOLOGIN NOBYPASSRLS INHERIT;
  END IF;
END $$;
GRANT plinth_api TO plinth_api_account;
GRANT plinth_api_account TO CURRENT_USER;

-- The privileges themselves are granted by sql/40_auth_policies.sql on every start, from the
-- table's columns then: later migrations add columns to app_users (is_anonymous, 055).

-- Users rules saved before this migration were compiled for the users collection's partition,
-- which holds no users: they never governed app_users. Their compiled SQL is dropped (the
-- project keeps the behaviour it had: every user readable); the text stays, and saving the
-- rules again (or any change of the users schema) compiles them into app_users' policies. A
-- `create` rule, which users no longer take (sign-up), is cleared.
UPDATE collections
   SET rules_sql = NULL,
       rules = CASE WHEN rules ? 'create' THEN jsonb_set(rules, '{create}', 'null') ELSE rules END
 WHERE lower(name) = 'users' AND rules IS NOT NULL;

-- Down Migration
REVOKE ALL ON app_users FROM plinth_api_full, plinth_api_account, plinth_api_publishable;
GRANT SELECT, INSERT, UPDATE, DELETE ON app_users TO plinth_api;
