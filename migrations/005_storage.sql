-- Up Migration
-- File storage: one row per uploaded object. The table is the source of truth for quota and
-- ownership: a row is `pending` from upload-request until upload-confirm charges the project's
-- storage counter (usage_counters, metric 'storage_bytes') in the same transaction that marks it
-- `confirmed`. Deleting a confirmed row refunds the counter in the same transaction.

CREATE TABLE files (
  project_id    object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  id            object_id NOT NULL,
  -- '<projectId>/<id>_<sanitised name>': what clients send back as filePath / path.
  path          text NOT NULL UNIQUE CHECK (path LIKE project_id || '/' || id || '\_%'),
  -- The end user who uploaded it with the publishable key; NULL for secret-key uploads.
  owner_id      text,
  size          bigint NOT NULL CHECK (size > 0),
  content_type  text NOT NULL,
  -- Where the bytes live: platform storage ('internal', charged to the quota) or the
  -- project's own bucket ('external', not charged).
  provider      text NOT NULL CHECK (provider IN ('internal', 'external')),
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'confirmed')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  confirmed_at  timestamptz,
  PRIMARY KEY (project_id, id)
);
CREATE INDEX files_recent_idx ON files (project_id, created_at DESC, id DESC) WHERE status = 'confirmed';
CREATE INDEX files_pending_idx ON files (created_at) WHERE status = 'pending';

GRANT SELECT, INSERT, UPDATE, DELETE ON files TO plinth_api;
