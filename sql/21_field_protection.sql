-- Field protection (docs/rules.md "Field protection", migrations/040). Both functions are
-- attached by the server: the trigger to a partition whose collection declares hidden or
-- read-only fields (src/modules/collections/protection-queries.ts), the function is what the
-- data API selects for an owner's own rows.

-- BEFORE INSERT OR UPDATE OF data on the partition, with one argument, the collection's spec:
-- {"owner": [keys], "secret": [keys], "readOnly": {key: default or null}}.
--   * readOnly, for plinth_api_publishable only: a new row may carry the field only with its
--     default (or null); an update may not change its value; a whole-document replace that
--     leaves it out keeps the stored value.
--   * hidden ("owner", "secret"), for every role: the values leave `data` for `private` /
--     `secret` (merged over what those hold, so a write that leaves a hidden field out keeps it).
--   * size_bytes is the whole stored document: data, private and secret.
-- A refusal is SQLSTATE PR403 with the field as COLUMN (src/db/errors.ts).
CREATE OR REPLACE FUNCTION plinth_protect_fields() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  spec jsonb := TG_ARGV[0]::jsonb;
  f text;
  def jsonb;
  before jsonb;
  owner_keys text[];
  secret_keys text[];
BEGIN
  IF current_user = 'plinth_api_publishable' THEN
    FOR f, def IN SELECT key, value FROM jsonb_each(coalesce(spec -> 'readOnly', '{}')) LOOP
      IF TG_OP = 'INSERT' THEN
        IF NEW.data ? f AND NEW.data -> f <> 'null'::jsonb AND NEW.data -> f IS DISTINCT FROM def THEN
          RAISE EXCEPTION 'Field % is read-only', f USING ERRCODE = 'PR403', COLUMN = f;
        END IF;
      ELSE
        before := coalesce(OLD.data -> f, OLD.private -> f, OLD.secret -> f);
        IF NEW.data ? f THEN
          IF NEW.data -> f IS DISTINCT FROM before THEN
            RAISE EXCEPTION 'Field % is read-only', f USING ERRCODE = 'PR403', COLUMN = f;
          END IF;
        ELSIF OLD.data ? f THEN
          NEW.data := NEW.data || jsonb_build_object(f, OLD.data -> f);
        END IF;
      END IF;
    END LOOP;
  END IF;
  owner_keys := ARRAY(SELECT jsonb_array_elements_text(coalesce(spec -> 'owner', '[]')));
  secret_keys := ARRAY(SELECT jsonb_array_elements_text(coalesce(spec -> 'secret', '[]')));
  IF NEW.data ?| owner_keys THEN
    NEW.private := coalesce(NEW.private, '{}') || (SELECT jsonb_object_agg(k, NEW.data -> k) FROM unnest(owner_keys) k WHERE NEW.data ? k);
  END IF;
  IF NEW.data ?| secret_keys THEN
    NEW.secret := coalesce(NEW.secret, '{}') || (SELECT jsonb_object_agg(k, NEW.data -> k) FROM unnest(secret_keys) k WHERE NEW.data ? k);
  END IF;
  NEW.data := NEW.data - owner_keys - secret_keys;
  NEW.size_bytes := octet_length(NEW.data::text) + coalesce(octet_length(NEW.private::text), 0) + coalesce(octet_length(NEW.secret::text), 0);
  RETURN NEW;
END
$$;
GRANT EXECUTE ON FUNCTION plinth_protect_fields() TO plinth_api;

-- The owner-visible hidden fields of one document, for its owner only: the caller's scoped
-- project and signed-in user must be the row's (the publishable role cannot select `private`).
CREATE OR REPLACE FUNCTION plinth_own_private(p_collection text, p_id text) RETURNS jsonb
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp AS $$
  SELECT d.private FROM documents d
   WHERE d.collection_id = p_collection AND d.id = p_id
     AND d.project_id = plinth_project_id() AND d.owner_id = plinth_user_id()
$$;
REVOKE ALL ON FUNCTION plinth_own_private(text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION plinth_own_private(text, text) TO plinth_api;

-- End users' profile fields (app_users.data) protected by the project's `users` collection,
-- looked up per write (profile writes are rare, and the schema is the collection's own row):
--   * readOnly, for plinth_api_publishable (update-profile, raw SQL) and plinth_api_account
--     (sign-up, social sign-in: the auth flows of a publishable key, migrations/063): the same
--     rule as for documents, so a user cannot give themself a role through any of them;
--   * hidden ("owner", "secret"), for every role: the values leave `data` for app_users'
--     `private` / `secret` (migrations/065), merged over what those hold, as for documents. The
--     publishable role has no privilege on those two columns (sql/40): raw SQL, populate, rule
--     lookups and public profiles never see them; the auth flows (the account itself) and the
--     secret key read them back (src/modules/auth/queries.ts, USER_DATA). The split is the same
--     lines as plinth_protect_fields' (keep them alike): a shared SQL function called from both
--     made a documents write 3.6x slower in the trigger (5,000-row insert: 216 -> 778 ms).
CREATE OR REPLACE FUNCTION plinth_protect_user_fields() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
  schema_fields jsonb;
  f text;
  def jsonb;
  before jsonb;
  owner_keys text[];
  secret_keys text[];
BEGIN
  SELECT c.fields INTO schema_fields FROM collections c WHERE c.project_id = NEW.project_id AND lower(c.name) = 'users';
  IF schema_fields IS NULL THEN
    RETURN NEW;
  END IF;
  IF current_user IN ('plinth_api_publishable', 'plinth_api_account') THEN
    FOR f, def IN
      SELECT x ->> 'key', coalesce(x -> 'default', 'null'::jsonb)
        FROM jsonb_array_elements(schema_fields) x
       WHERE x ->> 'readOnly' = 'true'
    LOOP
      IF TG_OP = 'INSERT' THEN
        IF NEW.data ? f AND NEW.data -> f <> 'null'::jsonb AND NEW.data -> f IS DISTINCT FROM def THEN
          RAISE EXCEPTION 'Field % is read-only', f USING ERRCODE = 'PR403', COLUMN = f;
        END IF;
      ELSE
        before := coalesce(OLD.data -> f, OLD.private -> f, OLD.secret -> f);
        IF (NEW.data ? f AND NEW.data -> f IS DISTINCT FROM before) OR (NOT NEW.data ? f AND OLD.data ? f) THEN
          RAISE EXCEPTION 'Field % is read-only', f USING ERRCODE = 'PR403', COLUMN = f;
        END IF;
      END IF;
    END LOOP;
  END IF;
  SELECT coalesce(array_agg(x ->> 'key') FILTER (WHERE x ->> 'hidden' = 'owner'), '{}'),
         coalesce(array_agg(x ->> 'key') FILTER (WHERE x ->> 'hidden' = 'secret'), '{}')
    INTO owner_keys, secret_keys
    FROM jsonb_array_elements(schema_fields) x
   WHERE x ? 'hidden';
  IF NEW.data ?| owner_keys THEN
    NEW.private := coalesce(NEW.private, '{}') || (SELECT jsonb_object_agg(k, NEW.data -> k) FROM unnest(owner_keys) k WHERE NEW.data ? k);
  END IF;
  IF NEW.data ?| secret_keys THEN
    NEW.secret := coalesce(NEW.secret, '{}') || (SELECT jsonb_object_agg(k, NEW.data -> k) FROM unnest(secret_keys) k WHERE NEW.data ? k);
  END IF;
  NEW.data := NEW.data - owner_keys - secret_keys;
  RETURN NEW;
END
$$;
GRANT EXECUTE ON FUNCTION plinth_protect_user_fields() TO plinth_api;
DROP TRIGGER IF EXISTS app_users_protect_fields ON app_users;
CREATE TRIGGER app_users_protect_fields BEFORE INSERT OR UPDATE OF data ON app_users
  FOR EACH ROW EXECUTE FUNCTION plinth_protect_user_fields();
