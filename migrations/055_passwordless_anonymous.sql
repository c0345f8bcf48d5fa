-- Up Migration
-- Issue 38 (docs/auth.md "Passwordless by email", "Anonymous users", "Your own sessions").
-- Policies: sql/46_passwordless_policies.sql.

-- Anonymous (guest) users have no email until they link one; they are marked as such, and an
-- anonymous user never has an email (linking one clears the mark in the same UPDATE). Emails
-- stay unique per project (NULLs do not collide in the unique index).
ALTER TABLE app_users ALTER COLUMN email DROP NOT NULL;
ALTER TABLE app_users ADD COLUMN is_anonymous boolean NOT NULL DEFAULT false;
ALTER TABLE app_users ADD CONSTRAINT app_users_anonymous_no_email CHECK (NOT is_anonymous OR email IS NULL);
-- The clean-up job's candidates (src/modules/auth/anonymous-cleanup.ts): old anonymous users.
CREATE INDEX app_users_anonymous_idx ON app_users (created_at) WHERE is_anonymous;

-- A passwordless sign-in in flight: one per project and email (a new request replaces it), with
-- a magic-link token (256 bits, stored as SHA-256) and a 6-digit code (HMAC-SHA-256 keyed by
-- ENCRYPTION_KEY and bound to project, email and purpose `passwordless`). Either signs in once;
-- the row is deleted by the sign-in. user_id is the account it was issued for (NULL: the
-- account is created at sign-in when the project allows sign-up); a link whose user no longer
-- has this email is refused. signup_data: the custom fields of an account to create.
CREATE TABLE app_user_passwordless (
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  email        text NOT NULL CHECK (email = lower(email) AND length(email) <= 320),
  user_id      object_id REFERENCES app_users (id) ON DELETE CASCADE,
  link_hash    text NOT NULL,
  code_hash    text NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  signup_data  jsonb NOT NULL DEFAULT '{}',
  expires_at   timestamptz NOT NULL,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (project_id, email)
);
CREATE UNIQUE INDEX app_user_passwordless_link_idx ON app_user_passwordless (link_hash);
CREATE INDEX app_user_passwordless_expiry_idx ON app_user_passwordless (expires_at);
CREATE INDEX app_user_passwordless_user_idx ON app_user_passwordless (user_id) WHERE user_id IS NOT NULL;
GRANT SELECT, INSERT, UPDATE, DELETE ON app_user_passwordless TO plinth_api;

-- Linking a social identity to a signed-in (e.g. anonymous) user: the state of that flow
-- names the user it links to (NULL for a sign-in).
ALTER TABLE social_states ADD COLUMN link_user_id object_id REFERENCES app_users (id) ON DELETE CASCADE;

-- A user's own session list: live rows of a user, newest use first.
CREATE INDEX app_user_sessions_live_idx ON app_user_sessions (user_id, last_used_at DESC)
  WHERE used_at IS NULL AND revoked_at IS NULL;

-- Down Migration
DROP INDEX app_user_sessions_live_idx;
ALTER TABLE social_states DROP COLUMN link_user_id;
DROP TABLE app_user_passwordless;
DROP INDEX app_users_anonymous_idx;
ALTER TABLE app_users DROP CONSTRAINT app_users_anonymous_no_email;
DELETE FROM app_users WHERE email IS NULL;
ALTER TABLE app_users DROP COLUMN is_anonymous;
ALTER TABLE app_users ALTER COLUMN email SET NOT NULL;
