-- The request log (migrations/064_request_logs.sql): tenant isolation like the other tenant
-- tables. The API role may only read, and only its project's rows; rows are written by the
-- owner (every API node's batched writer) and deleted by the owner (the trim job).
ALTER TABLE request_logs ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS request_logs_tenant ON request_logs;
CREATE POLICY request_logs_tenant ON request_logs FOR SELECT TO plinth_api
  USING (project_id = plinth_project_id());
