-- Up Migration
-- Refresh-session ids become random (128 bits, 32 hex characters) instead of ObjectIds: an
-- ObjectId is time + a per-process part + a counter, so one session id (and any other id the
-- node hands out) told an attacker the ids of its neighbours. Ids issued before this
-- migration (24 hex) stay valid until they rotate: the secret half of a token is what proves
-- possession, and since this change a wrong secret neither revokes nor reveals a session.
-- Operator sessions are looked up by the SHA-256 of a 256-bit token and never show an id;
-- their family ids use the same generator so both kinds of session are built alike.
CREATE DOMAIN session_id AS text CHECK (VALUE ~ '^[0-9a-f]{24}([0-9a-f]{8})?$');

ALTER TABLE app_user_sessions
  ALTER COLUMN id TYPE session_id,
  ALTER COLUMN family_id TYPE session_id,
  ALTER COLUMN rotated_to TYPE session_id;

ALTER TABLE operator_sessions ALTER COLUMN family_id TYPE session_id;
