-- Webhook endpoints (migrations/022_change_stream.sql) are written by the owner connection only.
-- The project archive (docs/backup.md) reads them in its one consistent snapshot, a tenant
-- transaction in the operator's scope (plinth_api_full): that role may read the endpoints of the
-- project it is scoped to (their signing secrets stay encrypted with ENCRYPTION_KEY); the
-- publishable role reads none. Idempotent: re-applied on every start.
ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS webhook_endpoints_operator_read ON webhook_endpoints;
CREATE POLICY webhook_endpoints_operator_read ON webhook_endpoints FOR SELECT TO plinth_api_full
  USING (project_id = plinth_project_id());
GRANT SELECT ON webhook_endpoints TO plinth_api_full;
