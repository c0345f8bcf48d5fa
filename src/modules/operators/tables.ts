/** Kysely types of this domain's tables (migrations/002_operators.sql creates them). */
import type { Generated } from 'kysely';
import type { Timestamp } from '../../db/types.js';

export interface OperatorSessionsTable {
  id: Generated<string>;
  operator_id: string;
  family_id: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

export type OtpPurpose = 'verify_email' | 'reset_password';

export interface OperatorOtpsTable {
  operator_id: string;
  purpose: OtpPurpose;
  code_hash: string;
  attempts: Generated<number>;
  expires_at: Timestamp;
  sent_at: Timestamp;
}

export interface OperatorTables {
  operator_sessions: OperatorSessionsTable;
  operator_otps: OperatorOtpsTable;
}
