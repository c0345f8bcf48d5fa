-- Tenant isolation: a row is visible to the API role only inside a transaction scoped to its
-- project. Other projects' rows are invisible, whatever the query says.

ALTER TABLE projects ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS projects_tenant ON projects;
CREATE POLICY projects_tenant ON projects TO plinth_api USING (id = plinth_project_id());

ALTER TABLE collections ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS collections_tenant ON collections;
CREATE POLICY collections_tenant ON collections TO plinth_api USING (project_id = plinth_project_id());

ALTER TABLE usage_counters ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS usage_counters_tenant ON usage_counters;
CREATE POLICY usage_counters_tenant ON usage_counters TO plinth_api
  USING (subject_id = plinth_project_id()) WITH CHECK (subject_id = plinth_project_id());
