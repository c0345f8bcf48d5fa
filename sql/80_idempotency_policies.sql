-- Idempotency keys (migrations/029_idempotency_keys.sql): tenant isolation like the other
-- tenant tables. Keys are per project; the caller (end user, key kind) is part of each row's
-- fingerprint, so another caller's replay is refused without reading the stored answer.
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS idempotency_keys_tenant ON idempotency_keys;
CREATE POLICY idempotency_keys_tenant ON idempotency_keys TO plinth_api
  USING (project_id = plinth_project_id()) WITH CHECK (project_id = plinth_project_id());
