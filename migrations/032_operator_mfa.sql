-- Up Migration
-- Second factors for operators (issue 35, docs/operators-and-projects.md "Second factors"): the
-- same authenticator app (TOTP), recovery codes, challenge and failure budget as end users
-- (migrations/031_user_mfa.sql), keyed by operator. Operator tables are reached only through the
-- owner connection (no tenant scope). platform_settings holds the admin's platform-wide switches
-- (`operator_mfa`: {required}).

ALTER TABLE operator_sessions
  ADD COLUMN aal text NOT NULL DEFAULT 'aal1' CHECK (aal IN ('aal1', 'aal2')),
  ADD COLUMN amr jsonb NOT NULL DEFAULT '[]';

CREATE TABLE operator_totp (
  operator_id  object_id PRIMARY KEY REFERENCES operators (id) ON DELETE CASCADE,
  secret       jsonb NOT NULL,
  verified_at  timestamptz,
  last_step    bigint,
  created_at   timestamptz NOT NULL
);

CREATE TABLE operator_recovery_codes (
  operator_id  object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  code_hash    text NOT NULL,
  used_at      timestamptz,
  created_at   timestamptz NOT NULL,
  PRIMARY KEY (operator_id, code_hash)
);

CREATE TABLE operator_mfa_challenges (
  id_hash      text PRIMARY KEY,
  operator_id  object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  amr          jsonb NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);
CREATE INDEX operator_mfa_challenges_expiry_idx ON operator_mfa_challenges (expires_at);

CREATE TABLE operator_mfa_failures (
  operator_id   object_id PRIMARY KEY REFERENCES operators (id) ON DELETE CASCADE,
  failures      integer NOT NULL,
  window_start  timestamptz NOT NULL
);

CREATE TABLE platform_settings (
  key         text PRIMARY KEY,
  value       jsonb NOT NULL,
  updated_at  timestamptz NOT NULL
);

-- Down Migration
DROP TABLE platform_settings, operator_mfa_failures, operator_mfa_challenges, operator_recovery_codes, operator_totp;
ALTER TABLE operator_sessions DROP COLUMN aal, DROP COLUMN amr;
