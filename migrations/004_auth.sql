-- Up Migration
-- End users of projects (issue 4): accounts, refresh sessions, one-time codes, and the
-- short-lived social sign-in records (OAuth state, rtCode). Every table carries project_id
-- and is isolated by the row-level-security policies in sql/40_auth_policies.sql.

-- One row per end user. Email is stored lower-cased and is unique per project; the password
-- only as an argon2id hash. Custom fields of the project's `users` schema live in `data`.
CREATE TABLE app_users (
  id              object_id PRIMARY KEY DEFAULT new_object_id(),
  project_id      object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  email           text NOT NULL CHECK (email = lower(email) AND length(email) <= 320),
  password_hash   text NOT NULL,
  email_verified  boolean NOT NULL DEFAULT false,
  data            jsonb NOT NULL DEFAULT '{}',
  github_id       text,
  google_id       text,
  auth_providers  text[] NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX app_users_email_idx ON app_users (project_id, email);
CREATE UNIQUE INDEX app_users_github_idx ON app_users (project_id, github_id) WHERE github_id IS NOT NULL;
CREATE UNIQUE INDEX app_users_google_idx ON app_users (project_id, google_id) WHERE google_id IS NOT NULL;
CREATE INDEX app_users_username_idx ON app_users (project_id, (data ->> 'username'));
CREATE INDEX app_users_recent_idx ON app_users (project_id, created_at DESC, id DESC);

-- One row per refresh token `<id>.<secret>`; only SHA-256(secret) is stored. Rotation marks
-- the row used (rotated_to = successor) and inserts the successor in the same family. A used,
-- revoked or expired token presented again revokes the whole family.
CREATE TABLE app_user_sessions (
  id            object_id PRIMARY KEY,
  project_id    object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id       object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  family_id     object_id NOT NULL,
  token_hash    text NOT NULL,
  ip            text,
  user_agent    text,
  created_at    timestamptz NOT NULL,
  last_used_at  timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  used_at       timestamptz,
  rotated_to    object_id,
  revoked_at    timestamptz
);
CREATE INDEX app_user_sessions_user_idx ON app_user_sessions (project_id, user_id);
CREATE INDEX app_user_sessions_family_idx ON app_user_sessions (family_id);
CREATE INDEX app_user_sessions_expiry_idx ON app_user_sessions (expires_at);

-- At most one live code per user and purpose (a new code replaces the old one). The code is
-- stored as an HMAC; attempts are counted so a code dies after 5 wrong guesses.
CREATE TABLE app_user_otps (
  user_id     object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  purpose     text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  project_id  object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  attempts    integer NOT NULL DEFAULT 0,
  expires_at  timestamptz NOT NULL,
  sent_at     timestamptz NOT NULL,
  PRIMARY KEY (user_id, purpose)
);

-- OAuth `state` of a social sign-in in flight: single use, 10 minutes. Kept in PostgreSQL so
-- any API node can finish a flow another began. Only SHA-256(state) is stored; the PKCE
-- verifier is AES-256-GCM encrypted.
CREATE TABLE social_states (
  state_hash     text PRIMARY KEY,
  project_id     object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  provider       text NOT NULL CHECK (provider IN ('github', 'google')),
  code_verifier  jsonb NOT NULL,
  nonce          text,
  expires_at     timestamptz NOT NULL,
  created_at     timestamptz NOT NULL
);
CREATE INDEX social_states_expiry_idx ON social_states (expires_at);

-- rtCode: exchanges the refresh token of a finished social sign-in once, within 60 s, for the
-- project that issued it. Only SHA-256(code) and SHA-256(access token) are stored; the refresh
-- token itself is encrypted.
CREATE TABLE social_exchange_codes (
  code_hash          text PRIMARY KEY,
  project_id         object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id            object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  access_token_hash  text NOT NULL,
  refresh_token      jsonb NOT NULL,
  expires_at         timestamptz NOT NULL
);

GRANT SELECT, INSERT, UPDATE, DELETE
  ON app_users, app_user_sessions, app_user_otps, social_states, social_exchange_codes TO plinth_api;
