-- Up Migration
-- Operators' passkeys (issue 35, docs/operators-and-projects.md "Second factors"): the same
-- WebAuthn credentials as end users' (migrations/031_user_mfa.sql), registered for the console's
-- relying party (DASHBOARD_URL's host), several per operator, each named; their single-use
-- ceremonies; and the WebAuthn challenge an operator's MFA challenge carries when it is
-- completed with a passkey. Operator tables are reached only through the owner connection.

CREATE TABLE operator_passkeys (
  id               text PRIMARY KEY,
  operator_id      object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  credential_id    text NOT NULL UNIQUE,
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
CREATE INDEX operator_passkeys_operator_idx ON operator_passkeys (operator_id);

-- operator_id is null for a discoverable sign-in (no account named yet).
CREATE TABLE operator_webauthn_challenges (
  challenge    text PRIMARY KEY,
  operator_id  object_id REFERENCES operators (id) ON DELETE CASCADE,
  purpose      text NOT NULL CHECK (purpose IN ('register', 'signin')),
  expires_at   timestamptz NOT NULL
);
CREATE INDEX operator_webauthn_challenges_expiry_idx ON operator_webauthn_challenges (expires_at);

ALTER TABLE operator_mfa_challenges ADD COLUMN webauthn_challenge text;

-- Down Migration
ALTER TABLE operator_mfa_challenges DROP COLUMN webauthn_challenge;
DROP TABLE operator_webauthn_challenges, operator_passkeys;
