/** Kysely types of the audit log's tables (migrations/070_audit_log.sql). */
import type { ColumnType, Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';

/** jsonb: written as JSON text, read back parsed. */
type Json = ColumnType<unknown, string | null, string | null>;

export interface AuditEntriesTable {
  id: Generated<string>;
  project_id: string;
  /** 1, 2, 3… per project, without gaps. */
  seq: number;
  at: Timestamp;
  operator_id: string | null;
  /** The operator's email at the time of the change. */
  operator_email: string | null;
  /** The client address as TRUST_PROXY lets Fastify read it. */
  ip: string | null;
  action: string;
  target: string | null;
  /** The changed setting before and after, secrets masked (mask.ts). */
  before: Json;
  after: Json;
  prev_hash: string;
  hash: string;
}

export interface AuditHeadsTable {
  project_id: string;
  /** The newest entry's seq and hash (0 and the genesis hash before the first). */
  seq: number;
  hash: string;
  /** The last entry the retention trim removed: where verification starts. */
  anchor_seq: Generated<number>;
  anchor_hash: string;
}

export interface AuditTables {
  audit_entries: AuditEntriesTable;
  audit_heads: AuditHeadsTable;
}
