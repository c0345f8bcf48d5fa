-- Upload confirmation in one statement (storage: confirm.ts, batching.ts).
--
-- Confirms a batch of a project's pending uploads, each given as (path, size). Locks the
-- matching pending rows (in path order, so concurrent batches cannot deadlock), charges the
-- project's storage counter through the quota guard (plinth_reserve, sql/05_quota_functions.sql)
-- when the files are on platform storage, and marks them confirmed: all in the caller's
-- transaction, so each charge and its status commit together. The whole batch is charged at
-- once; only when that would pass the limit are the files charged one by one, in path order,
-- so as many as fit are confirmed. Runs as the caller (plinth_api): the files policies decide
-- which rows it can see.
--
-- Returns one row per matched upload: confirmed, or still pending when the quota refused its
-- charge. An upload that is missing from the result did not match: never requested, already
-- confirmed, a different size, or confirmed by a concurrent call that won (the row lock makes
-- this one wait, then the status check excludes the row, so a file is charged once).
-- Lock order is files rows, then the counter row: the same as deleting a file.

CREATE OR REPLACE FUNCTION plinth_confirm_uploads(
  p_project text, p_paths text[], p_sizes bigint[], p_provider text, p_metric text, p_cap bigint, p_at timestamptz
) RETURNS SETOF files LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_ids text[];
  v_total bigint;
  f files;
BEGIN
  WITH locked AS (
    SELECT files.id, files.size FROM files
    JOIN (SELECT DISTINCT path, size FROM unnest(p_paths, p_sizes) AS w(path, size)) AS wanted
      ON files.path = wanted.path AND files.size = wanted.size
    WHERE files.project_id = p_project AND files.status = 'pending' AND files.provider = p_provider
    ORDER BY files.path
    FOR UPDATE OF files
  )
  SELECT array_agg(id), sum(size) INTO v_ids, v_total FROM locked;
  IF v_ids IS NULL THEN
    RETURN;
  END IF;
  IF p_provider <> 'internal' OR plinth_reserve(p_project, p_metric, '', v_total, p_cap) IS NOT NULL THEN
    RETURN QUERY
      UPDATE files SET status = 'confirmed', confirmed_at = p_at
      WHERE project_id = p_project AND id = ANY (v_ids)
      RETURNING *;
    RETURN;
  END IF;
  FOR f IN SELECT * FROM files WHERE project_id = p_project AND id = ANY (v_ids) ORDER BY path LOOP
    IF plinth_reserve(p_project, p_metric, '', f.size, p_cap) IS NULL THEN
      RETURN NEXT f;
      CONTINUE;
    END IF;
    RETURN QUERY
      UPDATE files SET status = 'confirmed', confirmed_at = p_at
      WHERE project_id = f.project_id AND id = f.id
      RETURNING *;
  END LOOP;
END $$;
