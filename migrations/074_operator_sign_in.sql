-- Up Migration
-- Operators' own sign-in (issue 49 item 5, docs/operators-and-projects.md "Your sessions"). Number
-- 073: may need renumbering when merged after other branches' migrations.
--
-- operator_sessions: the address and User-Agent of the sign-in or refresh that issued each row,
-- so an operator's live sessions can be told apart in the console.
ALTER TABLE operator_sessions ADD COLUMN ip text, ADD COLUMN user_agent text;

-- GitHub sign-in at the console: an operator's identities at a provider (GitHub's numeric user
-- id as `subject`), one per provider and operator; the email GitHub gave when it was linked.
CREATE TABLE operator_identities (
  provider         text NOT NULL CHECK (provider IN ('github')),
  subject          text NOT NULL,
  operator_id      object_id NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  email            text,
  created_at       timestamptz NOT NULL,
  last_sign_in_at  timestamptz NOT NULL,
  PRIMARY KEY (provider, subject),
  UNIQUE (operator_id, provider)
);

-- A console GitHub sign-in in flight: the state (its SHA-256), bound to the starting browser
-- (the SHA-256 of the key in its cookie), with the PKCE verifier (AES-256-GCM); taken once.
CREATE TABLE operator_oauth_states (
  state_hash     text PRIMARY KEY,
  browser_hash   text NOT NULL,
  code_verifier  jsonb NOT NULL,
  created_at     timestamptz NOT NULL,
  expires_at     timestamptz NOT NULL
);
CREATE INDEX operator_oauth_states_expiry_idx ON operator_oauth_states (expires_at);

-- Down Migration
DROP TABLE operator_oauth_states, operator_identities;
ALTER TABLE operator_sessions DROP COLUMN ip, DROP COLUMN user_agent;
