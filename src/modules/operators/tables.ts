/** Kysely types of this domain's tables (migrations/002_operators.sql creates them). */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { Aal, AmrEntry } from '../../lib/identity/assurance.js';
import type { PasskeyColumns } from '../../lib/identity/passkey-tables.js';

export interface OperatorSessionsTable {
  id: Generated<string>;
  operator_id: string;
  family_id: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
  /** Assurance of the family (migrations/032_operator_mfa.sql); rotations keep it. */
  aal: ColumnType<Aal, Aal | undefined, Aal>;
  amr: ColumnType<AmrEntry[], string | undefined, string>;
  /** The client of the sign-in or refresh that issued the row (migrations/074_operator_sign_in.sql). */
  ip: ColumnType<string | null, string | null | undefined, string | null>;
  user_agent: ColumnType<string | null, string | null | undefined, string | null>;
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

type Bigint = ColumnType<string | number, number | string, number | string>;

/** Second factors of operators (migrations/032_operator_mfa.sql). */
export interface OperatorTotpTable {
  operator_id: string;
  secret: JSONColumnType<Encrypted>;
  verified_at: Timestamp | null;
  last_step: Bigint | null;
  created_at: Timestamp;
}

export interface OperatorRecoveryCodesTable {
  operator_id: string;
  code_hash: string;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface OperatorMfaChallengesTable {
  id_hash: string;
  operator_id: string;
  amr: JSONColumnType<AmrEntry[]>;
  attempts: Generated<number>;
  webauthn_challenge: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

/** An operator's passkeys (migrations/045_operator_passkeys.sql). */
export interface OperatorPasskeysTable extends PasskeyColumns {
  operator_id: string;
}

export interface OperatorWebauthnChallengesTable {
  challenge: string;
  operator_id: string | null;
  purpose: 'register' | 'signin';
  expires_at: Timestamp;
}

export interface OperatorMfaFailuresTable {
  operator_id: string;
  failures: number;
  window_start: Timestamp;
}

/** The admin's platform-wide switches, by key (`operator_mfa`: {required}). */
export interface PlatformSettingsTable {
  key: string;
  value: JSONColumnType<Record<string, unknown>>;
  updated_at: Timestamp;
}

/** An operator's identity at a provider (migrations/074_operator_sign_in.sql): GitHub sign-in at the console. */
export interface OperatorIdentitiesTable {
  provider: 'github';
  subject: string;
  operator_id: string;
  email: string | null;
  created_at: Timestamp;
  last_sign_in_at: Timestamp;
}

/** A console GitHub sign-in in flight (taken once). */
export interface OperatorOauthStatesTable {
  state_hash: string;
  browser_hash: string;
  code_verifier: JSONColumnType<Encrypted>;
  created_at: Timestamp;
  expires_at: Timestamp;
  /** A flow started from the Account screen: link the GitHub account to this operator rather than sign in. */
  link_operator_id: string | null;
}

export interface OperatorTables {
  operator_identities: OperatorIdentitiesTable;
  operator_oauth_states: OperatorOauthStatesTable;
  operator_sessions: OperatorSessionsTable;
  operator_otps: OperatorOtpsTable;
  operator_totp: OperatorTotpTable;
  operator_recovery_codes: OperatorRecoveryCodesTable;
  operator_mfa_challenges: OperatorMfaChallengesTable;
  operator_mfa_failures: OperatorMfaFailuresTable;
  operator_passkeys: OperatorPasskeysTable;
  operator_webauthn_challenges: OperatorWebauthnChallengesTable;
  platform_settings: PlatformSettingsTable;
}
