-- Up Migration
-- The audit log (docs/audit.md): one entry per operator change made through the dashboard API,
-- per project: who (operator id and email at the time), when, from which address, the action,
-- its target, and a before/after of the changed setting with secrets masked. Written by the
-- owner connection right after the change succeeded, before the answer is sent
-- (src/modules/audit/http.ts); read by the dashboard in the project's tenant scope
-- (sql/87_audit_policies.sql). Never updated; deleted only by the retention trim
-- (`audit:trim`), which records where it cut in the project's head row.
--
-- Hash chain: each entry stores the SHA-256 of its canonical content (which includes the
-- previous entry's hash, `prev_hash`), `seq` numbers a project's entries 1, 2, 3... without
-- gaps. Writers of one project are serialised by a row lock on its `audit_heads` row, which
-- holds the newest entry's seq and hash (so deleting the newest entries is detected too) and
-- the anchor: the seq and hash of the last entry the trim removed (the oldest kept entry's
-- predecessor), where verification starts.
--
-- No foreign key to projects: a deleted project's log (ending with its `project.delete`
-- entry) is kept until the retention trim removes it.
CREATE TABLE audit_entries (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id      object_id NOT NULL,
  seq             bigint NOT NULL,
  at              timestamptz NOT NULL,
  operator_id     text,
  operator_email  text,
  ip              text,
  action          text NOT NULL,
  target          text,
  before          jsonb,
  after           jsonb,
  prev_hash       text NOT NULL,
  hash            text NOT NULL,
  UNIQUE (project_id, seq)
);
-- The console's time filters; (project_id, seq) serves paging, verification and the trim.
CREATE INDEX audit_entries_project_at ON audit_entries (project_id, at);
-- The retention trim (every project at once): entries arrive in time order.
CREATE INDEX audit_entries_at ON audit_entries USING brin (at);

CREATE TABLE audit_heads (
  project_id   object_id PRIMARY KEY,
  seq          bigint NOT NULL,
  hash         text NOT NULL,
  anchor_seq   bigint NOT NULL DEFAULT 0,
  anchor_hash  text NOT NULL
);

-- Entries are never changed; only the trim deletes them, and says so in its transaction
-- (SET LOCAL plinth.audit_trim = 'on'). A guard against mistakes, not against the database
-- owner (who can drop the trigger): the hash chain is what detects that.
CREATE FUNCTION audit_entries_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('plinth.audit_trim', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit entries are append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_entries_no_change BEFORE UPDATE OR DELETE ON audit_entries
  FOR EACH ROW EXECUTE FUNCTION audit_entries_guard();
CREATE TRIGGER audit_entries_no_truncate BEFORE TRUNCATE ON audit_entries
  FOR EACH STATEMENT EXECUTE FUNCTION audit_entries_guard();

-- Down Migration
DROP TABLE audit_heads;
DROP TABLE audit_entries;
DROP FUNCTION audit_entries_guard();
