-- Documents: tenant isolation, plus the owner rules of RLS-enabled collections.
--   * secret key: every row of the project.
--   * publishable key, read: all rows, except in `private` collections, where only rows whose
--     owner is the signed-in user.
--   * publishable key, write: only rows the signed-in user owns, only in RLS-enabled collections.

ALTER TABLE documents ENABLE ROW LEVEL SECURITY;

DROP POLICY IF EXISTS documents_tenant ON documents;
CREATE POLICY documents_tenant ON documents AS RESTRICTIVE TO plinth_api
  USING (project_id = plinth_project_id())
  WITH CHECK (project_id = plinth_project_id());

DROP POLICY IF EXISTS documents_read ON documents;
CREATE POLICY documents_read ON documents FOR SELECT TO plinth_api USING (
  plinth_key_kind() IN ('secret', 'operator', 'system')
  OR collection_id NOT IN (
       SELECT c.id FROM collections c
       WHERE c.project_id = plinth_project_id()
         AND (c.rls ->> 'enabled')::boolean AND c.rls ->> 'mode' = 'private')
  OR owner_id = plinth_user_id()
);

DROP POLICY IF EXISTS documents_write ON documents;
CREATE POLICY documents_write ON documents FOR ALL TO plinth_api
  USING (
    plinth_key_kind() IN ('secret', 'operator', 'system')
    OR (owner_id = plinth_user_id() AND collection_id IN (
         SELECT c.id FROM collections c
         WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean)))
  WITH CHECK (
    plinth_key_kind() IN ('secret', 'operator', 'system')
    OR (owner_id = plinth_user_id() AND collection_id IN (
         SELECT c.id FROM collections c
         WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean)));
