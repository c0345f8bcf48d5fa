-- The change stream's writer (migrations/022_change_stream.sql). Idempotent: re-applied on
-- every start.
--
-- The API roles may only add change rows of their own project (the trigger runs as the
-- writer); they can neither read nor alter the stream. The API nodes read it on the owner's
-- connection (src/modules/realtime/queries.ts).

ALTER TABLE changes ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS changes_insert ON changes;
CREATE POLICY changes_insert ON changes FOR INSERT TO plinth_api WITH CHECK (project_id = plinth_project_id());
GRANT INSERT ON changes TO plinth_api;
REVOKE SELECT, UPDATE, DELETE ON changes FROM plinth_api;

-- AFTER row trigger on a streaming collection's partition; arguments: the collection's name,
-- then the largest document (bytes) a change row carries whole.
CREATE OR REPLACE FUNCTION plinth_record_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  doc record;
  what text;
  prev jsonb;        -- an update's previous values of the top-level fields it changed
  absent text[];     -- the fields it added
  prev_at timestamptz;
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF NEW.deleted_at IS NOT NULL THEN RETURN NULL; END IF; -- an import of a deleted document
    what := 'create';
    doc := NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    IF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN what := 'delete';
    ELSIF OLD.deleted_at IS NOT NULL AND NEW.deleted_at IS NULL THEN what := 'restore';
    ELSIF NEW.deleted_at IS NULL THEN
      what := 'update';
      prev_at := OLD.updated_at;
      -- the difference only (migrations/028): enough to tell whether the old version matched a
      -- realtime filter, at the cost of the fields the update changed. Only when both versions
      -- are within the cap: a new version over it is sent without its body (truncated), so the
      -- old one cannot be rebuilt from it nor is it needed (the event goes to every subscriber
      -- of the collection); computing it would walk up to two large documents for nothing and
      -- store up to the cap's worth of old values in the change row.
      IF OLD.size_bytes <= TG_ARGV[1]::int AND NEW.size_bytes <= TG_ARGV[1]::int
         AND jsonb_typeof(OLD.data) = 'object' AND jsonb_typeof(NEW.data) = 'object' THEN
        SELECT coalesce(jsonb_object_agg(o.key, o.value), '{}') INTO prev
        FROM jsonb_each(OLD.data) o WHERE NEW.data -> o.key IS DISTINCT FROM o.value;
        SELECT coalesce(array_agg(k), '{}') INTO absent FROM jsonb_object_keys(NEW.data) k WHERE NOT OLD.data ? k;
      END IF;
    ELSE RETURN NULL; -- a change to a document that stays deleted
    END IF;
    doc := NEW;
  ELSE
    IF OLD.deleted_at IS NOT NULL THEN RETURN NULL; END IF; -- purging a soft-deleted one: already announced
    what := 'delete';
    doc := OLD;
  END IF;
  INSERT INTO changes (project_id, collection_id, collection, doc_id, action, owner_id, version, data, truncated,
                       doc_created_at, doc_updated_at, doc_deleted_at, prev_fields, prev_absent, prev_updated_at)
  VALUES (doc.project_id, doc.collection_id, TG_ARGV[0], doc.id, what, doc.owner_id, doc.version,
          CASE WHEN doc.size_bytes <= TG_ARGV[1]::int THEN doc.data END, doc.size_bytes > TG_ARGV[1]::int,
          doc.created_at, doc.updated_at, CASE WHEN TG_OP = 'DELETE' THEN clock_timestamp() ELSE doc.deleted_at END,
          prev, absent, prev_at);
  RETURN NULL;
END $$;
GRANT EXECUTE ON FUNCTION plinth_record_change() TO plinth_api;
