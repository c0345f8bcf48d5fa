-- End users (migrations/004_auth.sql): a row is visible to the API role only inside a tenant
-- transaction scoped to its project. Which user may touch which row is decided in code (the
-- auth endpoints act for the one user they authenticated); the policies stop cross-project
-- access whatever the code does. Idempotent: re-applied on every start.

ALTER TABLE app_users ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_users_tenant ON app_users;
CREATE POLICY app_users_tenant ON app_users TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

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
