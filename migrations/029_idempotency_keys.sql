-- Up Migration
-- Idempotency keys (docs/data.md "Retries: Idempotency-Key", docs/mail.md): a write sent with an
-- `Idempotency-Key` header stores its answer here, in the write's own transaction, so a retry
-- of a write that committed answers the first answer again and a rolled back one left nothing.
-- `fingerprint` is a hash of what the request asked (method, route, parameters, caller, body):
-- the same key with another request is refused (409), never answered with this row.
-- `status` NULL: a write still running (only /api/mail/send-batch commits such a claim first,
-- its provider call cannot join a transaction). Rows older than 24 h are expired: refused as
-- stale by the claim, deleted by the `idempotency:delete_expired` crontab job.
CREATE TABLE idempotency_keys (
  project_id  object_id NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  key         text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  fingerprint text NOT NULL,
  status      smallint,
  response    text,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (project_id, key)
);
CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO plinth_api;
