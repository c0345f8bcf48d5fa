-- Functions (migrations/068_functions.sql) are written by the owner connection only (the
-- dashboard API and the invocation log's writer). The project archive (docs/backup.md) reads a
-- project's functions, versions and secrets in its tenant snapshot as plinth_api_full; secrets
-- stay encrypted with ENCRYPTION_KEY. The publishable role reads none of them.
ALTER TABLE functions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS functions_operator_read ON functions;
CREATE POLICY functions_operator_read ON functions FOR SELECT TO plinth_api_full
  USING (project_id = plinth_project_id());
GRANT SELECT ON functions TO plinth_api_full;

ALTER TABLE function_versions ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS function_versions_operator_read ON function_versions;
CREATE POLICY function_versions_operator_read ON function_versions FOR SELECT TO plinth_api_full
  USING (project_id = plinth_project_id());
GRANT SELECT ON function_versions TO plinth_api_full;

ALTER TABLE function_secrets ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS function_secrets_operator_read ON function_secrets;
CREATE POLICY function_secrets_operator_read ON function_secrets FOR SELECT TO plinth_api_full
  USING (project_id = plinth_project_id());
GRANT SELECT ON function_secrets TO plinth_api_full;

ALTER TABLE function_invocations ENABLE ROW LEVEL SECURITY;
