-- End users (migrations/004_auth.sql): a row is visible to the API role only inside a tenant
-- transaction scoped to its project. Which user may touch which row is decided in code (the
-- auth endpoints act for the one user they authenticated); the policies stop cross-project
-- access whatever the code does. Idempotent: re-applied on every start.

-- app_users, per role (migrations/063_users_rules.sql):
--   * every API role: only rows of the scoped project (restrictive);
--   * plinth_api_full (secret key, operator, system) and plinth_api_account (the auth flows,
--     acting for the one account they authenticate): every row of the project;
--   * plinth_api_publishable (raw SQL, populate, lookups from rules, public profiles,
--     update-profile): every row of the project while the project's users collection has no
--     access rules (as before rules existed); else the project's own policies
--     `app_users_<action>_<projectId>`, compiled from its users rules
--     (plinth_sync_user_policies below, docs/rules.md "The users collection").
-- Privileges per role (migrations/063): the publishable role reads every column but
-- password_hash and the hidden profile fields (`private`, `secret`: migrations/065,
-- sql/21_field_protection.sql) and writes only the profile. Computed from the columns at each start, so a
-- column added by a later migration is readable too.
DO $do$
DECLARE
  cols text;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute
   WHERE attrelid = 'app_users'::regclass AND attnum > 0 AND NOT attisdropped AND attname NOT IN ('password_hash', 'private', 'secret');
  REVOKE ALL ON app_users FROM plinth_api, plinth_api_publishable;
  GRANT SELECT, INSERT, UPDATE, DELETE ON app_users TO plinth_api_full, plinth_api_account;
  EXECUTE format('GRANT SELECT (%s), UPDATE (data, updated_at), DELETE ON app_users TO plinth_api_publishable', cols);
END
$do$;

ALTER TABLE app_users ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_users_tenant ON app_users;
CREATE POLICY app_users_tenant ON app_users AS RESTRICTIVE TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());
DROP POLICY IF EXISTS app_users_full ON app_users;
CREATE POLICY app_users_full ON app_users TO plinth_api_full, plinth_api_account USING (true) WITH CHECK (true);

-- Whether the scoped project's users collection has access rules (called as a scalar
-- sub-select: once per statement). The collections row is the project's own (its tenant policy).
CREATE OR REPLACE FUNCTION plinth_users_ruled() RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM collections c
                  WHERE c.project_id = plinth_project_id() AND lower(c.name) = 'users' AND c.rules_sql IS NOT NULL)
$$;
GRANT EXECUTE ON FUNCTION plinth_users_ruled() TO plinth_api;

DROP POLICY IF EXISTS app_users_unruled ON app_users;
CREATE POLICY app_users_unruled ON app_users TO plinth_api_publishable
  USING (NOT (SELECT plinth_users_ruled())) WITH CHECK (NOT (SELECT plinth_users_ruled()));

-- The policies of one project's users rules, rebuilt from collections.rules_sql of its users
-- collection (NULL: dropped, the project is back to app_users_unruled). Each policy tests the
-- project id as a constant first, so for another project's rows it is false at once. The
-- compiled expressions are the server's (src/modules/rules/compile.ts), never client text:
--   read:   SELECT, the `view` rule, else `list`, else every user of the project;
--   update: UPDATE, the `update` rule on the row before (USING) and after (WITH CHECK), else
--           the user's own row (update-profile);
--   delete: DELETE, the `delete` rule, else none (no publishable path deletes a user).
--   No INSERT policy: signing up is the auth flow's (plinth_api_account), not a rule's.
CREATE OR REPLACE FUNCTION plinth_sync_user_policies(p_project text, r jsonb) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  pid text := quote_literal(p_project);
  upd text;
  old_policy text;
BEGIN
  -- Policy DDL locks app_users, every project's users, for its few milliseconds: only when
  -- there is something to drop or create.
  FOR old_policy IN
    SELECT policyname FROM pg_policies
     WHERE schemaname = current_schema() AND tablename = 'app_users'
       AND policyname IN ('app_users_read_' || p_project, 'app_users_update_' || p_project, 'app_users_delete_' || p_project)
  LOOP
    EXECUTE format('DROP POLICY %I ON app_users', old_policy);
  END LOOP;
  IF r IS NULL THEN
    RETURN;
  END IF;
  EXECUTE format('CREATE POLICY %I ON app_users FOR SELECT TO plinth_api_publishable USING (project_id = %s AND (%s))',
                 'app_users_read_' || p_project, pid, coalesce(r ->> 'view', r ->> 'list', 'true'));
  upd := coalesce(r ->> 'update', 'id = plinth_user_id()');
  EXECUTE format('CREATE POLICY %I ON app_users FOR UPDATE TO plinth_api_publishable USING (project_id = %2$s AND (%3$s)) WITH CHECK (project_id = %2$s AND (%3$s))',
                 'app_users_update_' || p_project, pid, upd);
  IF r ->> 'delete' IS NOT NULL THEN
    EXECUTE format('CREATE POLICY %I ON app_users FOR DELETE TO plinth_api_publishable USING (project_id = %s AND (%s))',
                   'app_users_delete_' || p_project, pid, r ->> 'delete');
  END IF;
END
$$;

ALTER TABLE app_user_sessions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_user_sessions_tenant ON app_user_sessions;
CREATE POLICY app_user_sessions_tenant ON app_user_sessions TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

ALTER TABLE app_user_otps ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_user_otps_tenant ON app_user_otps;
CREATE POLICY app_user_otps_tenant ON app_user_otps TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

-- The OAuth callback carries no API key: it finds its state by the state value through the
-- owner connection (single-use DELETE ... RETURNING), then continues in the state's project.
ALTER TABLE social_states ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS social_states_tenant ON social_states;
CREATE POLICY social_states_tenant ON social_states TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

ALTER TABLE social_exchange_codes ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS social_exchange_codes_tenant ON social_exchange_codes;
CREATE POLICY social_exchange_codes_tenant ON social_exchange_codes TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());
