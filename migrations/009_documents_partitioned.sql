-- Up Migration
-- Documents become a LIST-partitioned table: one partition per collection
-- (`documents_<collectionId>`), created with the collection and dropped with it
-- (src/modules/collections/partitions.ts).
--
-- Why: with one shared table every collection's indexes were partial indexes on that table.
-- Each INSERT opened and tested the predicate of every one of them (measured: 2.8 ms instead
-- of 0.35 ms per insert with 1 200 other collections' indexes), each list query was planned
-- against all of them (13 ms instead of 0.08 ms), creating an index scanned the whole
-- platform's documents under a lock that blocked every tenant's writes, and the planner had no
-- statistics for any collection's fields. Now the collection id in every statement (a literal)
-- prunes to one partition: a collection's plans, statistics and index builds are its own.
--
-- The partition's existence is the collection's existence, so there is no foreign key to
-- collections (it cost a key-share row lock on the collections row per inserted document).
-- Existing rows move to their collection's partition; the per-collection indexes are rebuilt
-- on it, unique ones still partial on live rows, the others plain (plain expression indexes
-- give the planner statistics on the field; partial ones do not).

ALTER TABLE documents RENAME TO documents_shared;
ALTER INDEX documents_pkey RENAME TO documents_shared_pkey;
ALTER INDEX documents_recent_idx RENAME TO documents_shared_recent_idx;
ALTER INDEX documents_owner_idx RENAME TO documents_shared_owner_idx;

CREATE TABLE documents (
  project_id     object_id NOT NULL,
  collection_id  object_id NOT NULL,
  id             object_id NOT NULL,
  owner_id       text,
  data           jsonb NOT NULL,
  size_bytes     integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  deleted_at     timestamptz,
  version        integer NOT NULL DEFAULT 0,
  PRIMARY KEY (collection_id, id)
) PARTITION BY LIST (collection_id);

-- Default order (newest first) and private-mode lists (the caller's rows, newest first).
CREATE INDEX documents_recent_idx ON documents (created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX documents_owner_idx ON documents (owner_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL AND owner_id IS NOT NULL;

-- Only the parent is granted: the API role reaches rows through it, under its policies.
GRANT SELECT, INSERT, UPDATE, DELETE ON documents TO plinth_api;

DO $do$
DECLARE
  c record;
  ix record;
  part text;
  def text;
BEGIN
  FOR c IN SELECT id FROM collections ORDER BY id LOOP
    part := 'documents_' || c.id;
    EXECUTE format('CREATE TABLE %I (LIKE documents INCLUDING DEFAULTS)', part);
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', part);
    EXECUTE format(
      'INSERT INTO %I (project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at, deleted_at, version)
       SELECT project_id, collection_id, id, owner_id, data, size_bytes, created_at, updated_at, deleted_at, version
       FROM documents_shared WHERE collection_id = %L', part, c.id);
    FOR ix IN
      SELECT indexname, indexdef FROM pg_indexes
      WHERE tablename = 'documents_shared' AND (indexname LIKE 'du\_' || c.id || '\_%' OR indexname LIKE 'dx\_' || c.id || '\_%')
    LOOP
      EXECUTE format('DROP INDEX %I', ix.indexname);
      def := regexp_replace(ix.indexdef, ' ON (\S+\.)?documents_shared ', format(' ON %I ', part));
      def := regexp_replace(def, ' WHERE .*$', '');
      IF ix.indexname LIKE 'du\_%' THEN def := def || ' WHERE (deleted_at IS NULL)'; END IF;
      EXECUTE def;
    END LOOP;
    EXECUTE format('ALTER TABLE documents ATTACH PARTITION %I FOR VALUES IN (%L)', part, c.id);
  END LOOP;
END
$do$;

-- Rows of collections that no longer exist had nowhere to go; the shared table's expression
-- statistics (ds_*) go with it.
DROP TABLE documents_shared;
