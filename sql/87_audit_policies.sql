-- The audit log (migrations/070_audit_log.sql): tenant isolation like the other tenant tables.
-- The API roles may only read, and only their project's rows: no INSERT, UPDATE or DELETE is
-- granted (and any such grant is revoked here), so no API can edit the log. Entries are written
-- and trimmed by the owner connection (src/modules/audit).
ALTER TABLE audit_entries ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS audit_entries_tenant ON audit_entries;
CREATE POLICY audit_entries_tenant ON audit_entries FOR SELECT TO plinth_api
  USING (project_id = plinth_project_id());
REVOKE ALL ON audit_entries FROM plinth_api;
GRANT SELECT ON audit_entries TO plinth_api;

ALTER TABLE audit_heads ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS audit_heads_tenant ON audit_heads;
CREATE POLICY audit_heads_tenant ON audit_heads FOR SELECT TO plinth_api
  USING (project_id = plinth_project_id());
REVOKE ALL ON audit_heads FROM plinth_api;
GRANT SELECT ON audit_heads TO plinth_api;
