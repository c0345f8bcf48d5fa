/** Kysely types of end users' second factors (migrations/031_user_mfa.sql). */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { AmrEntry } from '../../lib/identity/assurance.js';
import type { PasskeyColumns } from '../../lib/identity/passkey-tables.js';

type Bigint = ColumnType<string | number, number | string, number | string>;

export interface AppUserTotpTable {
  user_id: string;
  project_id: string;
  secret: JSONColumnType<Encrypted>;
  verified_at: Timestamp | null;
  last_step: Bigint | null;
  created_at: Timestamp;
}

export interface AppUserRecoveryCodesTable {
  user_id: string;
  code_hash: string;
  project_id: string;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface AppUserMfaChallengesTable {
  id_hash: string;
  project_id: string;
  user_id: string;
  amr: JSONColumnType<AmrEntry[]>;
  attempts: Generated<number>;
  webauthn_challenge: string | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface AppUserMfaFailuresTable {
  user_id: string;
  project_id: string;
  failures: number;
  window_start: Timestamp;
}

export interface AppUserPasskeysTable extends PasskeyColumns {
  project_id: string;
  user_id: string;
}

export interface AppUserWebauthnChallengesTable {
  challenge: string;
  project_id: string;
  user_id: string | null;
  purpose: 'register' | 'signin';
  expires_at: Timestamp;
}

export interface MfaTables {
  app_user_totp: AppUserTotpTable;
  app_user_recovery_codes: AppUserRecoveryCodesTable;
  app_user_mfa_challenges: AppUserMfaChallengesTable;
  app_user_mfa_failures: AppUserMfaFailuresTable;
  app_user_passkeys: AppUserPasskeysTable;
  app_user_webauthn_challenges: AppUserWebauthnChallengesTable;
}
