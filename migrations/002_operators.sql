-- Up Migration
-- Operators (dashboard accounts): refresh sessions and one-time codes. Platform tables, read
-- only through the owner connection, so they carry no row-level security.

-- One row per refresh token. Tokens are opaque; only their SHA-256 is stored. Each rotation
-- marks the old row used and inserts a new one in the same family; presenting a used token
-- again revokes the whole family (the token was stolen, or replayed).
CREATE TABLE operator_sessions (
  id           object_id PRIMARY KEY DEFAULT new_object_id(),
  operator_id  object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  family_id    object_id NOT NULL,
  token_hash   text NOT NULL UNIQUE,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  revoked_at   timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX operator_sessions_operator_idx ON operator_sessions (operator_id);
CREATE INDEX operator_sessions_family_idx ON operator_sessions (family_id);

-- At most one live code per operator and purpose; a new code replaces the old one.
CREATE TABLE operator_otps (
  operator_id  object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  purpose      text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password')),
  code_hash    text NOT NULL,
  attempts     integer NOT NULL DEFAULT 0,
  expires_at   timestamptz NOT NULL,
  sent_at      timestamptz NOT NULL,
  PRIMARY KEY (operator_id, purpose)
);
