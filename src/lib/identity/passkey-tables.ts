/**
 * Kysely types of what the two tables of passkeys share, end users' (app_user_passkeys,
 * src/modules/mfa/tables.ts) and operators' (operator_passkeys, src/modules/operators/tables.ts):
 * one shape, so one set of statements serves both (passkey-queries.ts).
 */
import type { ColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';

/** The columns both tables of passkeys share (each adds its account's column; end users' the project's). */
export interface PasskeyColumns {
  id: string;
  credential_id: string;
  public_key: string;
  counter: ColumnType<string | number, number | string, number | string>;
  transports: ColumnType<string[], string[] | undefined, string[]>;
  rp_id: string;
  backup_eligible: boolean;
  backed_up: boolean;
  name: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
}
