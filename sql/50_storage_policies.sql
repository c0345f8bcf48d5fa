-- Files: tenant isolation, plus ownership for publishable-key callers.
--   * secret key / operator / system: every file of the project.
--   * publishable key (with a signed-in end user): only the files that user uploaded;
--     other users' files and secret-key uploads are invisible, so they cannot be confirmed,
--     deleted or even probed through a pk.

ALTER TABLE files ENABLE ROW LEVEL SECURITY;

DROP POLICY IF EXISTS files_tenant ON files;
CREATE POLICY files_tenant ON files AS RESTRICTIVE TO plinth_api
  USING (project_id = plinth_project_id())
  WITH CHECK (project_id = plinth_project_id());

DROP POLICY IF EXISTS files_owner ON files;
CREATE POLICY files_owner ON files FOR ALL TO plinth_api
  USING (plinth_key_kind() IN ('secret', 'operator', 'system') OR owner_id = plinth_user_id())
  WITH CHECK (plinth_key_kind() IN ('secret', 'operator', 'system') OR owner_id = plinth_user_id());
