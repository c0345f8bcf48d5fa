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
-- A collection with access rules (docs/rules.md) is reached through its partition only, whose
-- policies are compiled from the rules: through the parent, the publishable role sees none of its
-- rows and writes none (`c.rules_sql IS NULL` below).
CREATE POLICY documents_read ON documents FOR SELECT TO plinth_api_publishable USING (
  collection_id NOT IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id()
      AND ((c.rls ->> 'enabled')::boolean AND c.rls ->> 'mode' = 'private' OR c.rules_sql IS NOT NULL))
  OR owner_id = plinth_user_id() AND collection_id NOT IN (
    SELECT c.id FROM collections c WHERE c.project_id = plinth_project_id() AND c.rules_sql IS NOT NULL)
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
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean AND c.rules_sql IS NULL));

DROP POLICY IF EXISTS documents_update ON documents;
-- No WITH CHECK: an UPDATE policy without one checks the new row with its USING expression.
CREATE POLICY documents_update ON documents FOR UPDATE TO plinth_api_publishable
  USING (owner_id = plinth_user_id() AND collection_id IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean AND c.rules_sql IS NULL));

DROP POLICY IF EXISTS documents_delete ON documents;
CREATE POLICY documents_delete ON documents FOR DELETE TO plinth_api_publishable
  USING (owner_id = plinth_user_id() AND collection_id IN (
    SELECT c.id FROM collections c
    WHERE c.project_id = plinth_project_id() AND (c.rls ->> 'enabled')::boolean AND c.rules_sql IS NULL));

-- Reads go straight to the collection's partition (src/modules/data/queries.ts), which PostgreSQL
-- plans for in about half the time of the parent: no partition pruning, and no collections
-- sub-select, because each partition carries the read rules of its own collection as constants.
-- Tenant isolation for every API role; everything for plinth_api_full; for
-- plinth_api_publishable:
--   * a collection without rules: SELECT only (writes go through the parent and its policies
--     above), everything, or, while the collection is private (RLS enabled, mode 'private'),
--     only the signed-in user's rows;
--   * a collection with rules (docs/rules.md): its compiled rules (collections.rules_sql) as
--     the SELECT, INSERT, UPDATE and DELETE policies, an action without a rule keeping the
--     mode's behaviour; writes come to the partition (src/modules/data/queries.ts).
-- Privileges on a partition, per role (migrations/040): plinth_api_full the table,
-- plinth_api_publishable every column but the hidden fields' `private` and `secret`; writes
-- only when the collection has rules (else they go through the parent).
CREATE OR REPLACE FUNCTION plinth_grant_documents(part text, writes boolean) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  cols text;
BEGIN
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) INTO cols
    FROM pg_attribute
   WHERE attrelid = part::regclass AND attnum > 0 AND NOT attisdropped AND attname NOT IN ('private', 'secret');
  EXECUTE format('REVOKE ALL ON %I FROM plinth_api, plinth_api_publishable, plinth_api_full', part);
  IF writes THEN
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO plinth_api_full', part);
    EXECUTE format('GRANT SELECT (%2$s), INSERT (%2$s), UPDATE (%2$s), DELETE ON %1$I TO plinth_api_publishable', part, cols);
  ELSE
    EXECUTE format('GRANT SELECT ON %I TO plinth_api_full', part);
    EXECUTE format('GRANT SELECT (%2$s) ON %1$I TO plinth_api_publishable', part, cols);
  END IF;
END
$$;

CREATE OR REPLACE FUNCTION plinth_sync_partition_policies(p_collection text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  part text;
  owner_only boolean;
  writable boolean;
  r jsonb;
  read_sql text;
  owner_write text;
  upd text;
  del text;
  cmd text;
  project text;
  is_users boolean;
BEGIN
  SELECT 'documents_' || c.id, coalesce((c.rls ->> 'enabled')::boolean AND c.rls ->> 'mode' = 'private', false),
         coalesce((c.rls ->> 'enabled')::boolean, false), c.rules_sql, c.project_id, lower(c.name) = 'users'
    INTO part, owner_only, writable, r, project, is_users
    FROM collections c WHERE c.id = p_collection;
  -- The users collection's documents are app_users rows: its rules are that table's policies
  -- (sql/40_auth_policies.sql); its partition stays empty, with the policies of no rules.
  IF is_users THEN
    PERFORM plinth_sync_user_policies(project, r);
    r := NULL;
  END IF;
  IF part IS NULL OR to_regclass(part) IS NULL THEN
    RETURN;
  END IF;
  EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', part);
  -- Without rules the partition is read-only to the API roles: SELECT policies only, as before
  -- rules existed; with rules the tenant and full-access policies cover every command.
  cmd := CASE WHEN r IS NULL THEN 'SELECT' ELSE 'ALL' END;
  EXECUTE format('DROP POLICY IF EXISTS documents_tenant ON %I', part);
  EXECUTE format('CREATE POLICY documents_tenant ON %I AS RESTRICTIVE FOR %s TO plinth_api
                    USING (project_id = plinth_project_id())%s', part, cmd,
                 CASE WHEN r IS NULL THEN '' ELSE ' WITH CHECK (project_id = plinth_project_id())' END);
  EXECUTE format('DROP POLICY IF EXISTS documents_full ON %I', part);
  EXECUTE format('CREATE POLICY documents_full ON %I FOR %s TO plinth_api_full USING (true)%s', part, cmd,
                 CASE WHEN r IS NULL THEN '' ELSE ' WITH CHECK (true)' END);
  read_sql := coalesce(r ->> 'view', r ->> 'list', CASE WHEN owner_only THEN 'owner_id = plinth_user_id()' ELSE 'true' END);
  EXECUTE format('DROP POLICY IF EXISTS documents_read ON %I', part);
  EXECUTE format('CREATE POLICY documents_read ON %I FOR SELECT TO plinth_api_publishable USING (%s)', part, read_sql);
  EXECUTE format('DROP POLICY IF EXISTS documents_insert ON %I', part);
  EXECUTE format('DROP POLICY IF EXISTS documents_update ON %I', part);
  EXECUTE format('DROP POLICY IF EXISTS documents_delete ON %I', part);
  PERFORM plinth_grant_documents(part, r IS NOT NULL);
  IF r IS NULL THEN
    RETURN;
  END IF;
  -- Today's write rule for an action without one: the owner, while RLS is enabled.
  owner_write := CASE WHEN writable THEN 'owner_id = plinth_user_id()' ELSE 'false' END;
  upd := coalesce(r ->> 'update', owner_write);
  del := coalesce(r ->> 'delete', owner_write);
  EXECUTE format('CREATE POLICY documents_insert ON %I FOR INSERT TO plinth_api_publishable WITH CHECK (%s)',
                 part, coalesce(r ->> 'create', owner_write));
  -- The API's delete is soft (an UPDATE of deleted_at): the update rule holds for the row before
  -- (USING) and after (WITH CHECK) an update, the delete rule for the row a soft delete marks.
  EXECUTE format('CREATE POLICY documents_update ON %I FOR UPDATE TO plinth_api_publishable
                    USING ((%s) OR (%s))
                    WITH CHECK (deleted_at IS NULL AND (%s) OR deleted_at IS NOT NULL AND (%s))', part, upd, del, upd, del);
  EXECUTE format('CREATE POLICY documents_delete ON %I FOR DELETE TO plinth_api_publishable USING (%s)', part, del);
END
$$;

-- Two triggers keep every partition's policies in step, whoever writes the collection (this
-- version, a node of the previous one during a rolling upgrade, a DBA): a change of rls or rules, and
-- the creation of a collection, at the commit of the creating transaction (deferred: the
-- partition is made after the collection row, in the same transaction).
DROP TRIGGER IF EXISTS collections_rls_partition_policies ON collections;
DROP TRIGGER IF EXISTS collections_partition_policies_on_create ON collections;
DROP FUNCTION IF EXISTS plinth_collections_rls_changed();

CREATE OR REPLACE FUNCTION plinth_collection_partition_policies() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM plinth_sync_partition_policies(NEW.id);
  RETURN NULL;
END
$$;

CREATE TRIGGER collections_rls_partition_policies AFTER UPDATE OF rls, rules_sql ON collections
  FOR EACH ROW WHEN (OLD.rls IS DISTINCT FROM NEW.rls OR OLD.rules_sql IS DISTINCT FROM NEW.rules_sql)
  EXECUTE FUNCTION plinth_collection_partition_policies();

CREATE CONSTRAINT TRIGGER collections_partition_policies_on_create AFTER INSERT ON collections
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION plinth_collection_partition_policies();

-- A users collection deleted (or its project: the delete cascades here) takes its users rules'
-- policies off app_users.
CREATE OR REPLACE FUNCTION plinth_users_collection_deleted() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM plinth_sync_user_policies(OLD.project_id, NULL);
  RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS collections_users_policies_on_delete ON collections;
CREATE TRIGGER collections_users_policies_on_delete AFTER DELETE ON collections
  FOR EACH ROW WHEN (lower(OLD.name) = 'users' AND OLD.rules_sql IS NOT NULL)
  EXECUTE FUNCTION plinth_users_collection_deleted();

-- Rules marked broken (docs/rules.md, "When a looked-up collection goes"; migrations/067): the
-- given actions' compiled SQL becomes `false` (their policies deny everything: fail closed),
-- each with its reason in rules_broken; the text as written stays in `rules`. The UPDATE fires
-- the trigger above, which rebuilds the partition's policies (or app_users' for `users`). An
-- action without compiled SQL is left alone (it has no rule to break).
CREATE OR REPLACE FUNCTION plinth_mark_rules_broken(p_collection text, p_actions text[], p_reason text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  marked text[];
BEGIN
  SELECT coalesce(array_agg(a ORDER BY a), '{}') INTO marked
    FROM collections c, unnest(p_actions) a
   WHERE c.id = p_collection AND c.rules_sql ? a;
  IF cardinality(marked) = 0 THEN
    RETURN marked;
  END IF;
  UPDATE collections c
     SET rules_sql = c.rules_sql || (SELECT jsonb_object_agg(a, 'false'::text) FROM unnest(marked) a),
         rules_broken = coalesce(c.rules_broken, '{}'::jsonb) || (SELECT jsonb_object_agg(a, p_reason) FROM unnest(marked) a)
   WHERE c.id = p_collection;
  RETURN marked;
END
$$;

-- The actions of a collection's compiled rules that read a partition no longer there: a
-- looked-up collection deleted by a version that dropped its partition CASCADE (taking those
-- policies with it) and left the rule naming it. Rebuilding such a policy would fail
-- (`relation "documents_<id>" does not exist`), so the start-up sync (src/db/migrate.ts) marks
-- them broken instead, with the looked-up names the rule text has and the project lacks.
CREATE OR REPLACE FUNCTION plinth_stale_rule_actions(p_rules_sql jsonb) RETURNS text[]
LANGUAGE sql STABLE AS $$
  SELECT coalesce(array_agg(e.key ORDER BY e.key), '{}')
    FROM jsonb_each_text(coalesce(p_rules_sql, '{}'::jsonb)) e
   WHERE EXISTS (SELECT 1 FROM regexp_matches(e.value, 'FROM "documents_([0-9a-f]{24})"', 'g') m
                  WHERE to_regclass('documents_' || m[1]) IS NULL)
$$;

CREATE OR REPLACE FUNCTION plinth_break_stale_rules(p_collection text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
  c record;
  stale text[];
  missing text;
BEGIN
  SELECT id, project_id, rules, rules_sql INTO c FROM collections WHERE id = p_collection;
  IF c.rules_sql IS NULL THEN
    RETURN '{}';
  END IF;
  stale := plinth_stale_rule_actions(c.rules_sql);
  IF cardinality(stale) = 0 THEN
    RETURN stale;
  END IF;
  SELECT string_agg(DISTINCT '''' || n.name || '''', ', ') INTO missing
    FROM unnest(stale) a, regexp_matches(coalesce(c.rules ->> a, ''), '@collection\.([A-Za-z0-9_-]+)', 'g') m,
         LATERAL (SELECT m[1] AS name) n
   WHERE NOT EXISTS (SELECT 1 FROM collections o WHERE o.project_id = c.project_id AND lower(o.name) = lower(n.name));
  RETURN plinth_mark_rules_broken(p_collection, stale,
    CASE WHEN missing IS NULL THEN 'Looks up a collection that no longer exists'
         ELSE 'Looks up collection ' || missing || ', which no longer exists' END
    || ': this rule denies everything until the rules are saved again.');
END
$$;
