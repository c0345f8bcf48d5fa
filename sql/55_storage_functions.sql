-- Upload confirmation in one statement (storage: confirm.ts, batching.ts).
--
-- Confirms a batch of a project's pending uploads, each given as (path, size): locks the
-- matching pending rows (in path order, so concurrent batches cannot deadlock) and marks them
-- confirmed. Nothing is charged here: an upload on platform storage was charged to the quota
-- when it was requested (storage/queries.ts insertPending), because its signed PUT puts the
-- bytes on disk before any confirm. Runs as the caller (plinth_api): the files policies decide
-- which rows it can see.
--
-- Returns one row per confirmed upload. An upload missing from the result did not match: never
-- requested, already confirmed, a different size, or confirmed by a concurrent call that won
-- (the row lock makes this one wait, then the status check excludes the row).

-- The earlier form charged the quota here (and took its metric and cap).
DROP FUNCTION IF EXISTS plinth_confirm_uploads(text, text[], bigint[], text, text, bigint, timestamptz);

CREATE OR REPLACE FUNCTION plinth_confirm_uploads(
  p_project text, p_paths text[], p_sizes bigint[], p_provider text, p_at timestamptz
) RETURNS SETOF files LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY
    WITH locked AS (
      SELECT files.id FROM files
      JOIN (SELECT DISTINCT path, size FROM unnest(p_paths, p_sizes) AS w(path, size)) AS wanted
        ON files.path = wanted.path AND files.size = wanted.size
      WHERE files.project_id = p_project AND files.status = 'pending' AND files.provider = p_provider
      ORDER BY files.path
      FOR UPDATE OF files
    )
    UPDATE files SET status = 'confirmed', confirmed_at = p_at
    WHERE files.project_id = p_project AND files.id IN (SELECT id FROM locked)
    RETURNING files.*;
END $$;
