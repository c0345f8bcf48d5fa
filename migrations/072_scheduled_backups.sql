-- Up Migration
-- Scheduled backups (docs/backup.md "Scheduled backups"). Number 072: may need renumbering
-- when merged after other branches' migrations.
--
-- backup_schedules: a project's own schedule; a project without a row follows the default of
-- its owner's plan (daily on paid plans, off on free: src/modules/backup/schedule.ts).
-- `cron` is a 5-field crontab expression in UTC; `preset` says how it was chosen.
CREATE TABLE backup_schedules (
  project_id   object_id PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  preset       text NOT NULL CHECK (preset IN ('off', 'daily', 'weekly', 'custom')),
  cron         text,
  keep_daily   int NOT NULL CHECK (keep_daily BETWEEN 0 AND 366),
  keep_weekly  int NOT NULL CHECK (keep_weekly BETWEEN 0 AND 520),
  updated_at   timestamptz NOT NULL
);

-- The project's backup key: 32 random bytes, AES-256-GCM encrypted with ENCRYPTION_KEY
-- (src/lib/crypto.ts), made with the project's first backup.
CREATE TABLE backup_keys (
  project_id  object_id PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  key         jsonb NOT NULL,
  created_at  timestamptz NOT NULL
);

-- One stored backup (or an attempt at one). `object_path` on `provider`'s backend
-- (`internal`: the node's storage, `external`: the project's own bucket).
CREATE TABLE backups (
  id             object_id PRIMARY KEY,
  project_id     object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  trigger        text NOT NULL CHECK (trigger IN ('schedule', 'manual')),
  -- the minute a scheduled run stands for: one backup per project per due minute
  scheduled_for  timestamptz,
  status         text NOT NULL CHECK (status IN ('queued', 'running', 'retrying', 'succeeded', 'failed')),
  attempts       int NOT NULL DEFAULT 0,
  max_attempts   int NOT NULL,
  error_code     text,
  error_message  text,
  provider       text CHECK (provider IN ('internal', 'external')),
  object_path    text,
  size_bytes     bigint,
  counts         jsonb,
  created_at     timestamptz NOT NULL,
  started_at     timestamptz,
  finished_at    timestamptz,
  UNIQUE (project_id, scheduled_for)
);
CREATE INDEX backups_project_created ON backups (project_id, created_at DESC);

-- Long work on a project and how far it got, for the console's progress bars: backups,
-- restores, imports and exports. `percent` 0–100, `phase` a word the console shows.
CREATE TABLE project_operations (
  id             object_id PRIMARY KEY,
  project_id     object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  kind           text NOT NULL CHECK (kind IN ('backup', 'restore', 'import', 'export')),
  status         text NOT NULL CHECK (status IN ('queued', 'running', 'retrying', 'succeeded', 'failed')),
  phase          text NOT NULL,
  percent        real NOT NULL DEFAULT 0,
  backup_id      object_id REFERENCES backups (id) ON DELETE SET NULL,
  -- a restore into a new project: that project
  target_project_id object_id,
  error_code     text,
  error_message  text,
  attempts       int NOT NULL DEFAULT 0,
  detail         jsonb,
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL,
  finished_at    timestamptz
);
CREATE INDEX project_operations_project_created ON project_operations (project_id, created_at DESC);

-- Down Migration
DROP TABLE project_operations;
DROP TABLE backups;
DROP TABLE backup_keys;
DROP TABLE backup_schedules;
