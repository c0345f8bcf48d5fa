-- Unique fields of the users schema (migrations/017_app_user_unique_values.sql). Idempotent:
-- re-applied on every start.
--
-- Every write of app_users.data records the user's values of the project's unique fields in
-- app_user_unique_values, whose primary key refuses a value another user holds (SQLSTATE
-- 23505, COLUMN = the field, so the API can say which). A users-schema change rebuilds the
-- values under the exclusive form of the per-project advisory lock below; writes take its
-- shared form, so a write that raced the change either finishes before the rebuild reads the
-- table or reads the new field list after it: no value slips through unchecked.

CREATE OR REPLACE FUNCTION plinth_users_schema_lock(project text) RETURNS bigint
  LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT hashtextextended('plinth:users-unique:' || project, 0) $$;

ALTER TABLE app_user_unique_fields ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_user_unique_fields_tenant ON app_user_unique_fields;
CREATE POLICY app_user_unique_fields_tenant ON app_user_unique_fields TO plinth_api
  USING (project_id = plinth_project_id());

ALTER TABLE app_user_unique_values ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS app_user_unique_values_tenant ON app_user_unique_values;
CREATE POLICY app_user_unique_values_tenant ON app_user_unique_values TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());

CREATE OR REPLACE FUNCTION plinth_app_user_unique_values() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  f record;
  v text;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.data IS NOT DISTINCT FROM OLD.data THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock_shared(plinth_users_schema_lock(NEW.project_id));
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM app_user_unique_values WHERE user_id = NEW.id;
  END IF;
  FOR f IN SELECT field, numeric FROM app_user_unique_fields WHERE project_id = NEW.project_id LOOP
    v := plinth_unique_key(CASE WHEN f.numeric THEN plinth_num(NEW.data, f.field)::text ELSE plinth_txt(NEW.data, f.field) END);
    CONTINUE WHEN v IS NULL;
    -- DO NOTHING waits for a concurrent holder of the value and skips if it committed.
    INSERT INTO app_user_unique_values (project_id, field, value, user_id)
    VALUES (NEW.project_id, f.field, v, NEW.id)
    ON CONFLICT DO NOTHING;
    IF NOT FOUND THEN
      RAISE EXCEPTION 'another user already has this value of the unique field %', f.field
        USING ERRCODE = 'unique_violation', COLUMN = f.field, CONSTRAINT = 'app_user_unique_values_pkey';
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS app_users_unique_values ON app_users;
CREATE TRIGGER app_users_unique_values AFTER INSERT OR UPDATE OF data ON app_users
  FOR EACH ROW EXECUTE FUNCTION plinth_app_user_unique_values();
