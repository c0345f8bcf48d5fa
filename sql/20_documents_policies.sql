-- Documents: tenant isolation, plus the owner rules of RLS-enabled collections.
--   * every API role (plinth_api and its members): only rows of the scoped project;
--   * plinth_api_full (secret key, operator, system): every row of the project;
--   * plinth_api_publishable, read: all rows, except in `private` collections, where only rows
--     whose owner is the signed-in user;
--   * plinth_api_publishable, insert/update/delete: only rows the signed-in user owns, only in RLS-enabled
--     collections.
-- plinth_api itself has no permissive policy here: a connection in no sub-role sees nothing.
-- The kind of access is the role (migrations/011_api_key_roles.sql), not a setting tested on
-- every row: for a list of 800 matching rows that test cost ~0.5 ms of planning and execution.

ALTER TABLE documents ENABLE ROW LEVEL SECURITY;

DROP POLICY IF EXISTS documents_tenant ON documents;
CREATE POLICY documents_tenant ON documents AS RESTRICTIVE TO plinth_api
  USING (project_id = plinth_project_id())
  WITH CHECK (project_id = plinth_project_id());

DROP POLICY IF EXISTS documents_full ON documents;
CREATE POLICY documents_full ON documents FOR ALL TO plinth_api_full USING (true) WITH CHECK (true);

DROP POLICY IF EXISTS documents_read ON documents;
CREATE POLICY documents_read ON documents FOR SELECT TO plinth_api_publishable USING (
  collection_id NOT IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id()
      AND (c.rls ->> 'enabled')::boolean AND c.rls ->> 'mode' = 'private')
  OR owner_id = plinth_user_id()
);

-- Writes get one policy per command, not one FOR ALL policy: a FOR ALL policy is also a SELECT
-- policy, so every publishable read (list, get) planned and ran its collections sub-select on top
-- of documents_read's, though it can only admit rows documents_read already admits (the caller's
-- own). Per command, a list's planning and execution take ~0.13 ms less (docs/data.md).
DROP POLICY IF EXISTS documents_write ON documents;

DROP POLICY IF EXISTS documents_insert ON documents;
CREATE POLICY documents_insert ON documents FOR INSERT TO plinth_api_publishable
  WITH CHECK (owner_id = plinth_user_id() AND collection_id IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean));

DROP POLICY IF EXISTS documents_update ON documents;
CREATE POLICY documents_update ON documents FOR UPDATE TO plinth_api_publishable
  USING (owner_id = plinth_user_id() AND collection_id IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean))
  WITH CHECK (owner_id = plinth_user_id() AND collection_id IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean));

DROP POLICY IF EXISTS documents_delete ON documents;
CREATE POLICY documents_delete ON documents FOR DELETE TO plinth_api_publishable
  USING (owner_id = plinth_user_id() AND collection_id IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean));
