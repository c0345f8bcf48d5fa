-- Up Migration
-- One row per running job-worker process (src/worker/heartbeat.ts): the graphile-worker ids
-- of its workers and when it last said it was alive. A process whose row goes stale died
-- without releasing its jobs (SIGKILL, out of memory, a lost machine); another worker
-- process deletes the row and force-unlocks those ids' jobs, instead of graphile-worker's
-- fixed 4-hour lock expiry. Times are the database's, so node clocks never matter.
CREATE TABLE worker_heartbeats (
  process_id text PRIMARY KEY,
  worker_ids text[] NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  last_seen timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX worker_heartbeats_last_seen ON worker_heartbeats (last_seen);

-- Down Migration
DROP TABLE worker_heartbeats;
