/** Kysely types of this domain's tables (migrations/004_auth.sql creates them). */
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { Aal, AmrEntry } from '../../lib/identity/assurance.js';

export interface AppUsersTable {
  id: Generated<string>;
  project_id: string;
  /** NULL only for an anonymous user (migrations/055_passwordless_anonymous.sql). */
  email: string | null;
  password_hash: string;
  email_verified: Generated<boolean>;
  data: JSONColumnType<Record<string, unknown>, Record<string, unknown> | undefined, Record<string, unknown>>;
  /** Hidden "owner" / "secret" fields of the users schema, moved out of `data` by the trigger (migrations/065). */
  private: JSONColumnType<Record<string, unknown> | null, Record<string, unknown> | null | undefined, Record<string, unknown> | null>;
  secret: JSONColumnType<Record<string, unknown> | null, Record<string, unknown> | null | undefined, Record<string, unknown> | null>;
  github_id: string | null;
  google_id: string | null;
  auth_providers: ColumnType<string[], string[] | undefined, string[]>;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** Set when an operator disabled the user (migrations/018_app_users_disabled.sql). */
  disabled_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** A guest user (POST /api/userAuth/anonymous) that has linked no email, passkey or social identity yet. */
  is_anonymous: Generated<boolean>;
}

export interface AppUserSessionsTable {
  id: string;
  project_id: string;
  user_id: string;
  family_id: string;
  token_hash: string;
  ip: string | null;
  user_agent: string | null;
  created_at: Timestamp;
  last_used_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  rotated_to: string | null;
  revoked_at: Timestamp | null;
  /** Assurance of the family (migrations/031_user_mfa.sql). */
  aal: ColumnType<Aal, Aal | undefined, Aal>;
  amr: ColumnType<AmrEntry[], string | undefined, string>;
}

export type UserOtpPurpose = 'verify_email' | 'reset_password';

export interface AppUserOtpsTable {
  user_id: string;
  purpose: UserOtpPurpose;
  project_id: string;
  code_hash: string;
  attempts: Generated<number>;
  expires_at: Timestamp;
  sent_at: Timestamp;
}

export interface SocialStatesTable {
  state_hash: string;
  /** SHA-256 of the key the starting browser holds in a cookie (social/cookie.ts); NULL for a link state, bound to its user instead (migration 062). */
  browser_hash: string | null;
  project_id: string;
  /** 'github', 'google' or the id of one of the project's OpenID Connect providers. */
  provider: string;
  code_verifier: JSONColumnType<Encrypted>;
  nonce: string | null;
  expires_at: Timestamp;
  created_at: Timestamp;
  /** Set when the flow links the identity to this signed-in user instead of signing in (migration 055). */
  link_user_id: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface SocialExchangeCodesTable {
  code_hash: string;
  project_id: string;
  user_id: string;
  access_token_hash: string;
  refresh_token: JSONColumnType<Encrypted>;
  expires_at: Timestamp;
}

/** A passwordless sign-in in flight: magic link and code (migrations/055_passwordless_anonymous.sql). */
export interface AppUserPasswordlessTable {
  project_id: string;
  email: string;
  user_id: string | null;
  link_hash: string;
  code_hash: string;
  attempts: Generated<number>;
  signup_data: JSONColumnType<Record<string, unknown>, string | undefined, string>;
  expires_at: Timestamp;
  created_at: Timestamp;
}

/** Unique fields of a project's users schema (migrations/017_app_user_unique_values.sql). */
export interface AppUserUniqueFieldsTable {
  project_id: string;
  field: string;
  numeric: boolean;
}

/** One row per user and unique field with a value; written by a trigger (sql/45_auth_unique_values.sql). */
export interface AppUserUniqueValuesTable {
  project_id: string;
  field: string;
  value: string;
  user_id: string;
}

export interface AuthTables {
  app_users: AppUsersTable;
  app_user_unique_fields: AppUserUniqueFieldsTable;
  app_user_unique_values: AppUserUniqueValuesTable;
  app_user_sessions: AppUserSessionsTable;
  app_user_otps: AppUserOtpsTable;
  app_user_passwordless: AppUserPasswordlessTable;
  social_states: SocialStatesTable;
  social_exchange_codes: SocialExchangeCodesTable;
}
