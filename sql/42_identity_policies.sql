-- End users' OpenID Connect identities (migrations/060_oidc_identities.sql): visible to the API
-- role only inside a tenant transaction scoped to their project, like every auth table
-- (sql/40_auth_policies.sql). Idempotent: re-applied on every start.
ALTER TABLE app_user_identities ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_user_identities_tenant ON app_user_identities;
CREATE POLICY app_user_identities_tenant ON app_user_identities TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());
