-- Localized auth mail templates (migrations/061_auth_mail_templates.sql): visible to the API
-- role only inside a tenant transaction scoped to their project. Idempotent: re-applied on
-- every start.
ALTER TABLE auth_mail_templates ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS auth_mail_templates_tenant ON auth_mail_templates;
CREATE POLICY auth_mail_templates_tenant ON auth_mail_templates TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());
