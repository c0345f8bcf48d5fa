-- Passwordless sign-ins in flight (migrations/055_passwordless_anonymous.sql): visible to the
-- API role only inside a tenant transaction scoped to their project, like every auth table
-- (sql/40_auth_policies.sql). A link presented with another project's key finds nothing.
-- Idempotent: re-applied on every start.
ALTER TABLE app_user_passwordless ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_user_passwordless_tenant ON app_user_passwordless;
CREATE POLICY app_user_passwordless_tenant ON app_user_passwordless TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());
