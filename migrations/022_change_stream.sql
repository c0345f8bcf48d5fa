-- Up Migration
-- The change stream (docs/realtime.md): one row per create, update, soft delete, restore and
-- hard delete of a document in a collection that streams its changes (realtime on, or a
-- project webhook endpoint listening to it). Written by a trigger on the collection's
-- partition (sql/70_change_stream.sql, created by src/modules/collections/change-trigger-queries.ts)
-- in the writer's own transaction, so a change exists exactly when its write committed.
--
-- Readers never use a plain sequence: `id` is taken at insert time, but transactions commit
-- in any order, so a reader that saw id 11 could later miss a still-running id 10. Each row
-- instead carries its writer's transaction id (`xid`); a reader reads only rows whose xid is
-- below the oldest transaction still running (pg_snapshot_xmin of its snapshot), in (xid, id)
-- order: every such writer has finished, so nothing below the cursor can still appear.
ALTER TABLE collections ADD COLUMN realtime boolean NOT NULL DEFAULT false;

CREATE TABLE changes (
  xid            xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id             bigint GENERATED ALWAYS AS IDENTITY,
  project_id     object_id NOT NULL,
  collection_id  object_id NOT NULL,
  collection     text NOT NULL,
  doc_id         object_id NOT NULL,
  action         text NOT NULL CHECK (action IN ('create', 'update', 'delete', 'restore')),
  owner_id       text,
  version        integer NOT NULL,
  -- the document after the change (before it, for a delete); NULL when larger than the cap
  data           jsonb,
  truncated      boolean NOT NULL DEFAULT false,
  doc_created_at timestamptz NOT NULL,
  doc_updated_at timestamptz NOT NULL,
  doc_deleted_at timestamptz,
  at             timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (xid, id)
);
CREATE INDEX changes_at ON changes (at);

-- What retention has removed: a reader whose cursor is below this has a gap (→ `reset`).
CREATE TABLE change_stream_horizon (
  only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  xid       xid8 NOT NULL,
  id        bigint NOT NULL
);
INSERT INTO change_stream_horizon (xid, id) VALUES ('0', 0);

-- Outbound webhooks (docs/webhooks.md): a project's endpoints, the dispatcher's position in
-- the stream, one delivery per (endpoint, change) and one row per attempt to send it.
CREATE TABLE webhook_endpoints (
  id              object_id PRIMARY KEY,
  project_id      object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  url             text NOT NULL,
  description     text NOT NULL DEFAULT '',
  -- empty: every action / every collection (lower-cased names)
  events          text[] NOT NULL DEFAULT '{}',
  collections     text[] NOT NULL DEFAULT '{}',
  -- the signing secret (whsec_…), encrypted with ENCRYPTION_KEY (src/lib/crypto.ts)
  secret          jsonb NOT NULL,
  enabled         boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- the first failed delivery since the last success; an endpoint failing too long is disabled
  failing_since   timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id);

CREATE TABLE webhook_cursor (
  only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  xid       xid8 NOT NULL,
  id        bigint NOT NULL
);
-- the dispatcher starts at the stream's present, not its past
INSERT INTO webhook_cursor (xid, id) VALUES (pg_snapshot_xmin(pg_current_snapshot()), 0);

CREATE TABLE webhook_deliveries (
  id            text PRIMARY KEY,            -- msg_<object id>: the webhook-id receivers de-duplicate on
  endpoint_id   object_id NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  project_id    object_id NOT NULL,
  event_type    text NOT NULL,
  payload       jsonb NOT NULL,
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts      integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz
);
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);

CREATE TABLE webhook_attempts (
  delivery_id   text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt       integer NOT NULL,
  at            timestamptz NOT NULL DEFAULT now(),
  status_code   integer,
  duration_ms   integer NOT NULL,
  response      text,                        -- the first 1 KB of the answer
  error         text,
  PRIMARY KEY (delivery_id, attempt)
);

-- Down Migration
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_cursor;
DROP TABLE webhook_endpoints;
DROP TABLE change_stream_horizon;
DROP TABLE changes;
ALTER TABLE collections DROP COLUMN realtime;
