-- Teams (migrations/071_project_members.sql): tenant isolation like the other tenant tables.
-- Members, invitations and transfers are written by the owner connection (src/modules/members)
-- after the dashboard's role guard; the API role may only read its own project's rows, and
-- never an invitation's token hash.
ALTER TABLE project_members ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS project_members_tenant ON project_members;
CREATE POLICY project_members_tenant ON project_members FOR SELECT TO plinth_api
  USING (project_id = plinth_project_id());
REVOKE ALL ON project_members FROM plinth_api;
GRANT SELECT ON project_members TO plinth_api;

ALTER TABLE project_invitations ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS project_invitations_tenant ON project_invitations;
CREATE POLICY project_invitations_tenant ON project_invitations FOR SELECT TO plinth_api
  USING (project_id = plinth_project_id());
REVOKE ALL ON project_invitations FROM plinth_api;
GRANT SELECT (id, project_id, email, role, invited_by, created_at, expires_at, accepted_at, accepted_by, revoked_at) ON project_invitations TO plinth_api;

ALTER TABLE project_transfers ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS project_transfers_tenant ON project_transfers;
CREATE POLICY project_transfers_tenant ON project_transfers FOR SELECT TO plinth_api
  USING (project_id = plinth_project_id());
REVOKE ALL ON project_transfers FROM plinth_api;
GRANT SELECT ON project_transfers TO plinth_api;
