/** Kysely types of this domain's own tables (migrations/060_oidc_identities.sql). */
import type { ColumnType } from 'kysely';

export interface AppUserIdentitiesTable {
  project_id: string;
  /** The project's provider id (e.g. 'keycloak', 'apple'). */
  provider: string;
  issuer: string;
  subject: string;
  user_id: string;
  email: string | null;
  created_at: ColumnType<Date, Date, Date>;
  last_sign_in_at: ColumnType<Date, Date, Date>;
}

export interface SocialTables {
  app_user_identities: AppUserIdentitiesTable;
}
