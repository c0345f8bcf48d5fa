-- End users' second factors (migrations/031_user_mfa.sql): visible to the API role only inside
-- a tenant transaction scoped to their project, like every auth table (sql/40_auth_policies.sql).
-- Idempotent: re-applied on every start.
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['app_user_totp', 'app_user_recovery_codes', 'app_user_mfa_challenges',
                           'app_user_mfa_failures', 'app_user_passkeys', 'app_user_webauthn_challenges']
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('DROP POLICY IF EXISTS %I ON %I', t || '_tenant', t);
    EXECUTE format('CREATE POLICY %I ON %I TO plinth_api USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id())', t || '_tenant', t);
  END LOOP;
END $$;
