/** Kysely types of the idempotency domain's table (migrations/029_idempotency_keys.sql). */
import type { Timestamp } from '../../db/types.js';

export interface IdempotencyKeysTable {
  project_id: string;
  key: string;
  fingerprint: string;
  /** NULL while the write that claimed the key is still running (send-batch only). */
  status: number | null;
  /** The answer's body, exactly as it was sent (JSON text). */
  response: string | null;
  created_at: Timestamp;
}

export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable;
}
