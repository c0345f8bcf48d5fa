-- Up Migration
-- Second factors for end users (issue 35, docs/auth.md "Second factors"): TOTP factors, recovery
-- codes, the MFA challenge a first factor leaves when a second one is due, the per-account
-- failure budget, passkeys and their single-use WebAuthn challenges. Sessions remember the
-- assurance level they were opened at, so a refresh keeps it. Policies: sql/41_mfa_policies.sql.

-- The assurance level of a session family (aal1: one factor, aal2: two) and the methods used
-- ([{method, timestamp}]), copied to each rotated successor and put in every access token.
ALTER TABLE app_user_sessions
  ADD COLUMN aal text NOT NULL DEFAULT 'aal1' CHECK (aal IN ('aal1', 'aal2')),
  ADD COLUMN amr jsonb NOT NULL DEFAULT '[]';

-- One TOTP factor per user. The secret is AES-256-GCM encrypted (ENCRYPTION_KEY). A factor is
-- unverified until its first code is confirmed; last_step is the last accepted 30 s step: a
-- code of that step or an older one is refused (RFC 6238 §5.2, no replay within the window).
CREATE TABLE app_user_totp (
  user_id      object_id PRIMARY KEY REFERENCES app_users (id) ON DELETE CASCADE,
  project_id   object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  secret       jsonb NOT NULL,
  verified_at  timestamptz,
  last_step    bigint,
  created_at   timestamptz NOT NULL
);
CREATE INDEX app_user_totp_project_idx ON app_user_totp (project_id);

-- Ten codes per user, shown once; stored as HMAC-SHA-256 (ENCRYPTION_KEY, bound to the user),
-- spent by one conditional UPDATE. Regenerating deletes the whole set.
CREATE TABLE app_user_recovery_codes (
  user_id     object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  code_hash   text NOT NULL,
  project_id  object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  used_at     timestamptz,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (user_id, code_hash)
);
CREATE INDEX app_user_recovery_codes_project_idx ON app_user_recovery_codes (project_id);

-- What a first factor leaves instead of tokens when a second one is due: found by the SHA-256
-- of a 256-bit token, 5 minutes, 5 tries, deleted by the success that uses it.
-- webauthn_challenge: the challenge a passkey used as second factor must sign.
CREATE TABLE app_user_mfa_challenges (
  id_hash             text PRIMARY KEY,
  project_id          object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id             object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  amr                 jsonb NOT NULL,
  attempts            integer NOT NULL DEFAULT 0,
  webauthn_challenge  text,
  created_at          timestamptz NOT NULL,
  expires_at          timestamptz NOT NULL
);
CREATE INDEX app_user_mfa_challenges_expiry_idx ON app_user_mfa_challenges (expires_at);
CREATE INDEX app_user_mfa_challenges_user_idx ON app_user_mfa_challenges (user_id);

-- Wrong second factors per account (from any address, any challenge): 10 per 15 minutes.
CREATE TABLE app_user_mfa_failures (
  user_id       object_id PRIMARY KEY REFERENCES app_users (id) ON DELETE CASCADE,
  project_id    object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  failures      integer NOT NULL,
  window_start  timestamptz NOT NULL
);

-- Passkeys (WebAuthn credentials): several per user, each named. credential_id is the
-- authenticator's id (base64url), unique per project's relying party; counter and backup
-- flags as last reported.
CREATE TABLE app_user_passkeys (
  id               text PRIMARY KEY,
  project_id       object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id          object_id NOT NULL REFERENCES app_users (id) ON DELETE CASCADE,
  credential_id    text NOT NULL,
  public_key       text NOT NULL,
  counter          bigint NOT NULL DEFAULT 0,
  transports       text[] NOT NULL DEFAULT '{}',
  rp_id            text NOT NULL,
  backup_eligible  boolean NOT NULL,
  backed_up        boolean NOT NULL,
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  created_at       timestamptz NOT NULL,
  last_used_at     timestamptz
);
CREATE UNIQUE INDEX app_user_passkeys_credential_idx ON app_user_passkeys (project_id, credential_id);
CREATE INDEX app_user_passkeys_user_idx ON app_user_passkeys (user_id);

-- WebAuthn ceremonies in flight: found by the challenge itself, deleted by the response that
-- uses it, 5 minutes. user_id is null for a discoverable sign-in (no account named yet).
CREATE TABLE app_user_webauthn_challenges (
  challenge   text PRIMARY KEY,
  project_id  object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  user_id     object_id REFERENCES app_users (id) ON DELETE CASCADE,
  purpose     text NOT NULL CHECK (purpose IN ('register', 'signin')),
  expires_at  timestamptz NOT NULL
);
CREATE INDEX app_user_webauthn_challenges_expiry_idx ON app_user_webauthn_challenges (expires_at);

GRANT SELECT, INSERT, UPDATE, DELETE
  ON app_user_totp, app_user_recovery_codes, app_user_mfa_challenges, app_user_mfa_failures,
     app_user_passkeys, app_user_webauthn_challenges
  TO plinth_api;

-- Down Migration
DROP TABLE app_user_webauthn_challenges, app_user_passkeys, app_user_mfa_failures,
  app_user_mfa_challenges, app_user_recovery_codes, app_user_totp;
ALTER TABLE app_user_sessions DROP COLUMN aal, DROP COLUMN amr;
