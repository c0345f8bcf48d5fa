-- Up Migration
-- Operator access tokens issued before the account's last password change or reset are
-- refused (src/plugins/operator-auth.ts). The refresh sessions were already revoked then; the
-- access tokens (15 minutes, stateless) of whoever held the account before lived on, and after
-- a reset that verified the email they could even carry admin rights (ADMIN_EMAIL).
ALTER TABLE operators ADD COLUMN tokens_valid_after timestamptz;
