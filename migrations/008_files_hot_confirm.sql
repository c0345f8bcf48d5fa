-- Up Migration
-- Confirming an upload changes only `status` and `confirmed_at`. With no index mentioning
-- either (not even in a partial-index predicate) and free room left on each page, that update
-- is a HOT update: a new row version on the same page and no new index entries, instead of
-- one entry in each of the table's indexes. Measured on the upload-confirm path: about a third
-- of PostgreSQL's work per upload-request + confirm.
--   * files_recent_idx: no longer partial; the dashboard listing filters confirmed rows.
--   * files_pending_idx (created_at WHERE pending) becomes files_created_idx (created_at):
--     the sweep jobs each read one hour of uploads (see src/modules/storage/sweep.ts).
DROP INDEX files_pending_idx;
DROP INDEX files_recent_idx;
CREATE INDEX files_recent_idx ON files (project_id, created_at DESC, id DESC);
CREATE INDEX files_created_idx ON files (created_at);
ALTER TABLE files SET (fillfactor = 70);
