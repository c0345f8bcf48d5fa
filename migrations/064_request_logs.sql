-- Up Migration
-- The request log (docs/dashboard.md "Request log"): the last public-API requests of each
-- project, as operators read them in the console. One row per answered request that carried a
-- valid API key: when, method, the ROUTED route pattern (never the raw URL: no query strings,
-- no keys), status, duration, the error envelope's code and the verified end user. No bodies,
-- no headers, no keys. Written by every API node in batches (src/modules/logs/buffer.ts) as
-- the database owner; read by the dashboard in the project's tenant scope (sql/85_request_log_policies.sql).
-- Bounded by age and by rows per project: the `logs:trim_requests` crontab job deletes the rest.
-- No foreign key to projects (a check per inserted row); a deleted project's rows are deleted
-- by the projectDeleting hook, and by age in any case.
CREATE TABLE request_logs (
  id           bigint GENERATED ALWAYS AS IDENTITY,
  project_id   object_id NOT NULL,
  at           timestamptz NOT NULL,
  method       text NOT NULL,
  route        text NOT NULL,
  status       smallint NOT NULL,
  duration_ms  real NOT NULL,
  code         text,
  user_id      text
);
-- The console's reads (newest first, per project) and the per-project cap.
CREATE INDEX request_logs_project_at ON request_logs (project_id, at, id);
-- The age trim: rows arrive in time order, a block range index costs almost nothing to keep.
CREATE INDEX request_logs_at ON request_logs USING brin (at);

GRANT SELECT ON request_logs TO plinth_api;

-- Down Migration
DROP TABLE request_logs;
