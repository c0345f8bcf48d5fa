-- Up Migration
-- Usage over time (docs/dashboard.md "Usage history"): per project, per UTC hour, one row per
-- metric. Counters (requests by route group and status class, function invocations and errors,
-- AI calls) are counted in memory on each API node and added here in batches
-- (src/modules/usage/counters.ts): `value` grows by each node's count (node ''). A realtime
-- peak is each node's own (node = that node's id, kept with GREATEST), the hour's peak being
-- their sum. Samples (data bytes, file bytes, mail sent and bounced) are written by the
-- `usage:sample` job and replace the hour's value. Kept USAGE_RETENTION_DAYS (90) by the
-- `usage:trim` job. Owner-only: the dashboard reads it after checking the project's owner.
-- No foreign key to projects (a check per upserted row); a deleted project's rows are deleted by
-- the projectDeleting hook, and by age in any case.
CREATE TABLE usage_hourly (
  project_id  object_id NOT NULL,
  hour        timestamptz NOT NULL,
  metric      text NOT NULL,
  node        text NOT NULL DEFAULT '',
  value       bigint NOT NULL,
  PRIMARY KEY (project_id, hour, metric, node)
);
-- The retention trim (rows arrive in hour order).
CREATE INDEX usage_hourly_hour ON usage_hourly USING brin (hour);

-- Alert settings per project (docs/dashboard.md "Usage alerts"). No row: plan-limit alerts on,
-- no error-rate or latency threshold, no webhook. The webhook secret is encrypted (ENCRYPTION_KEY).
CREATE TABLE usage_alert_settings (
  project_id          object_id PRIMARY KEY REFERENCES projects(id) ON DELETE CASCADE,
  enabled             boolean NOT NULL DEFAULT true,
  error_rate_percent  real,
  p99_ms              integer,
  cooldown_minutes    integer NOT NULL DEFAULT 60,
  webhook_url         text,
  webhook_secret      jsonb,
  updated_at          timestamptz NOT NULL DEFAULT now()
);

-- Which alert was sent: one row per subject (project, or operator for the account-wide AI
-- sessions), alert and period ('YYYY-MM' for plan limits; '' for the error rate and latency,
-- whose `fired_at` carries the cooldown). Claimed in the transaction that enqueues the mail and
-- the webhook, so two workers, a retried job or a restart never send one alert twice.
CREATE TABLE usage_alerts_sent (
  subject_id  text NOT NULL,
  alert       text NOT NULL,
  period      text NOT NULL,
  project_id  object_id NOT NULL,
  fired_at    timestamptz NOT NULL,
  detail      jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (subject_id, alert, period)
);
CREATE INDEX usage_alerts_sent_project ON usage_alerts_sent (project_id, fired_at DESC);

-- Down Migration
DROP TABLE usage_alerts_sent;
DROP TABLE usage_alert_settings;
DROP TABLE usage_hourly;
