-- Up Migration
-- An operator can disable an end user from the dashboard: a disabled user cannot log in (any
-- method) or refresh; their sessions are revoked when they are disabled. NULL = active.
ALTER TABLE app_users ADD COLUMN disabled_at timestamptz;

-- Down Migration
ALTER TABLE app_users DROP COLUMN disabled_at;
