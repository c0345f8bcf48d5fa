-- Up Migration
-- Unique fields of a project's `users` schema (e.g. `username`), enforced for real (issue 12
-- item 7). End users of every project share one table, so a per-project unique index on
-- app_users would add one index per project to every write and every plan of that table
-- (measured: 2 000 such partial indexes cut a signup-and-lookup loop from 2 200 to 57 per
-- second). Instead each unique value is a row here, under one primary key: a real unique
-- index, race-free, whatever the number of projects.
--
-- app_user_unique_fields: which keys of `app_users.data` are unique in a project, and whether
--   they compare as numbers (plinth_num) or text (plinth_txt), as documents' unique indexes do.
--   Kept in step with the users schema by src/modules/collections/indexes.ts.
-- app_user_unique_values: one row per user and unique field that has a value; written by the
--   trigger in sql/45_auth_unique_values.sql on every insert or update of app_users.data.
--   Values up to 256 characters are kept as they are; longer ones as their SHA-256 (a B-tree
--   entry has a size limit, and a client's long value must be a 409 or a success, not a 500).

CREATE FUNCTION plinth_unique_key(v text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT CASE WHEN length(v) <= 256 THEN v ELSE 'sha256:' || encode(sha256(convert_to(v, 'UTF8')), 'hex') END
$$;

CREATE TABLE app_user_unique_fields (
  project_id  object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  field       text NOT NULL,
  numeric     boolean NOT NULL,
  PRIMARY KEY (project_id, field)
);

CREATE TABLE app_user_unique_values (
  project_id  object_id NOT NULL,
  field       text NOT NULL,
  value       text NOT NULL,
  user_id     object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  PRIMARY KEY (project_id, field, value),
  FOREIGN KEY (project_id, field) REFERENCES app_user_unique_fields (project_id, field) ON DELETE CASCADE
);
CREATE INDEX app_user_unique_values_user_idx ON app_user_unique_values (user_id);

GRANT SELECT ON app_user_unique_fields TO plinth_api;
GRANT SELECT, INSERT, DELETE ON app_user_unique_values TO plinth_api;

-- Existing projects: every unique String/Number/Boolean/Date field of a users schema (email
-- and password are columns, not data) ...
INSERT INTO app_user_unique_fields (project_id, field, numeric)
SELECT DISTINCT c.project_id, f ->> 'key', f ->> 'type' = 'Number'
  FROM collections c, jsonb_array_elements(c.fields) f
 WHERE lower(c.name) = 'users'
   AND f ->> 'unique' = 'true'
   AND f ->> 'type' IN ('String', 'Number', 'Boolean', 'Date')
   AND f ->> 'key' NOT IN ('email', 'password');

-- ... except where the users already hold duplicates: such a field stays unenforced until the
-- operator resolves them and saves the schema again (which then answers 409 while they last).
WITH vals AS (
  SELECT u.project_id, uf.field,
         plinth_unique_key(CASE WHEN uf.numeric THEN plinth_num(u.data, uf.field)::text ELSE plinth_txt(u.data, uf.field) END) AS value
    FROM app_users u JOIN app_user_unique_fields uf ON uf.project_id = u.project_id
), dup AS (
  SELECT DISTINCT project_id, field FROM vals WHERE value IS NOT NULL GROUP BY project_id, field, value HAVING count(*) > 1
)
DELETE FROM app_user_unique_fields uf USING dup WHERE uf.project_id = dup.project_id AND uf.field = dup.field;

INSERT INTO app_user_unique_values (project_id, field, value, user_id)
SELECT * FROM (
  SELECT u.project_id, uf.field,
         plinth_unique_key(CASE WHEN uf.numeric THEN plinth_num(u.data, uf.field)::text ELSE plinth_txt(u.data, uf.field) END) AS value, u.id
    FROM app_users u JOIN app_user_unique_fields uf ON uf.project_id = u.project_id
) v WHERE value IS NOT NULL;
