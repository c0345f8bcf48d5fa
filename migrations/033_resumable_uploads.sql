-- Up Migration
-- Resumable (tus) uploads, docs/storage.md "Resumable uploads". Every API node serves any
-- upload: what @tus/server keeps per upload (its metadata, and the S3 multipart upload id) is a
-- row here, not a file or a map on one node, and a PATCH holds a lease in upload_locks (renewed
-- while it streams; a node that wants the upload asks the holder to let go). The file itself is
-- the `files` row inserted, charged, when the upload is created (same as an upload-request).
CREATE TABLE upload_sessions (
  id text PRIMARY KEY,                       -- the file path <projectId>/<id>_<name>
  project_id text NOT NULL,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX upload_sessions_project_idx ON upload_sessions (project_id);

CREATE TABLE upload_locks (
  id text PRIMARY KEY,
  holder text NOT NULL,
  expires_at timestamptz NOT NULL,
  release_requested boolean NOT NULL DEFAULT false
);

-- Down Migration
DROP TABLE upload_locks;
DROP TABLE upload_sessions;
