/** SQL of the end-user tables, run in the project's tenant scope (`ctx.db.tenant` or `ctx.db.read`). */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Tx } from '../../db/pool.js';
import type { NewSession } from './session-queries.js';
import type { UserOtpPurpose } from './tables.js';
import { WHOLE_DATA_SQL } from '../../db/whole-data.js';

/**
 * The whole profile: `data` with the hidden fields of the users schema merged back, which the
 * trigger keeps in `private` / `secret` (sql/21_field_protection.sql, migrations/065). Read by
 * the roles acting for the account itself or with the secret key (the publishable role has no
 * privilege on those columns); callers drop what their reader may not see (users.ts).
 */
export const USER_DATA = sql<Record<string, unknown>>`${sql.raw(WHOLE_DATA_SQL)}`.as('data');

const COLUMNS = [
  'id', 'email', 'password_hash', 'email_verified', 'github_id', 'google_id', 'auth_providers', 'created_at', 'updated_at',
  'disabled_at', 'is_anonymous',
] as const;
/** A user's row for its owner or the secret key: `data` is the whole profile (USER_DATA). */
export const USER_COLUMNS = [...COLUMNS, USER_DATA];

export interface UserRow {
  id: string;
  /** Null only for an anonymous user. */
  email: string | null;
  password_hash: string;
  email_verified: boolean;
  data: Record<string, unknown>;
  github_id: string | null;
  google_id: string | null;
  auth_providers: string[];
  created_at: Date;
  updated_at: Date;
  disabled_at: Date | null;
  is_anonymous: boolean;
}

export interface NewUser {
  projectId: string;
  /** Null only with isAnonymous. */
  email: string | null;
  passwordHash: string;
  emailVerified: boolean;
  data: Record<string, unknown>;
  githubId?: string | null;
  googleId?: string | null;
  authProviders?: string[];
  isAnonymous?: boolean;
  now: Date;
}

/** Inserts a user; null when the email is already taken in this project. */
export async function insertUser(tx: Tx, u: NewUser): Promise<UserRow | null> {
  const row = await tx
    .insertInto('app_users')
    .values({
      project_id: u.projectId,
      email: u.email,
      password_hash: u.passwordHash,
      email_verified: u.emailVerified,
      data: JSON.stringify(u.data) as never,
      github_id: u.githubId ?? null,
      google_id: u.googleId ?? null,
      auth_providers: u.authProviders ?? [],
      is_anonymous: u.isAnonymous === true,
      created_at: u.now,
      updated_at: u.now,
    })
    .onConflict((oc) => oc.columns(['project_id', 'email']).doNothing())
    .returning(USER_COLUMNS)
    .executeTakeFirst();
  return (row as UserRow | undefined) ?? null;
}

/** A new email/password account: no provider ids (social sign-in creates its users with insertUser). */
type NewEmailUser = Omit<NewUser, 'githubId' | 'googleId' | 'authProviders' | 'isAnonymous' | 'email'> & { id: string; email: string };

/**
 * A new account in one statement: the user, the first session of its family and its email
 * verification code. One round trip and all or nothing without a transaction of its own (the
 * foreign keys are checked at the statement's end, when the user row exists). Null, with
 * nothing written, when the email is already taken in this project.
 */
export async function insertAccount(db: Tx, a: { user: NewEmailUser; session: NewSession; otp: NewOtp }): Promise<UserRow | null> {
  const { user: u, session: s, otp: o } = a;
  const { rows } = await sql<UserRow>`
    WITH u AS (
      INSERT INTO app_users (id, project_id, email, password_hash, email_verified, data, created_at, updated_at)
      VALUES (${u.id}, ${u.projectId}, ${u.email}, ${u.passwordHash}, ${u.emailVerified}, ${JSON.stringify(u.data)}::jsonb, ${u.now}, ${u.now})
      ON CONFLICT (project_id, email) DO NOTHING
      RETURNING ${sql.join(COLUMNS.map((c) => sql.ref(c)))}, ${USER_DATA}
    ), s AS (
      INSERT INTO app_user_sessions (id, project_id, user_id, family_id, token_hash, ip, user_agent, created_at, last_used_at, expires_at, aal, amr)
      SELECT ${s.id}, ${s.projectId}, u.id, ${s.familyId}, ${s.tokenHash}, ${s.ip}, ${s.userAgent}, ${s.now}, ${s.now}, ${s.expiresAt},
             ${s.aal}, ${JSON.stringify(s.amr)}::jsonb FROM u
    ), o AS (
      INSERT INTO app_user_otps (user_id, project_id, purpose, code_hash, attempts, expires_at, sent_at)
      SELECT u.id, ${o.projectId}, ${o.purpose}, ${o.codeHash}, 0, ${o.expiresAt}, ${o.now} FROM u
    )
    SELECT * FROM u`.execute(db);
  return rows[0] ?? null;
}

export async function findUserByEmail(tx: Tx, email: string): Promise<UserRow | null> {
  const row = await tx.selectFrom('app_users').select(USER_COLUMNS).where('email', '=', email).executeTakeFirst();
  return (row as UserRow | undefined) ?? null;
}

export async function findUserById(tx: Tx, id: string): Promise<UserRow | null> {
  const row = await tx.selectFrom('app_users').select(USER_COLUMNS).where('id', '=', id).executeTakeFirst();
  return (row as UserRow | undefined) ?? null;
}

export async function findUserByProvider(tx: Tx, provider: 'github' | 'google', providerId: string): Promise<UserRow | null> {
  const column = provider === 'github' ? 'github_id' : 'google_id';
  const row = await tx.selectFrom('app_users').select(USER_COLUMNS).where(column, '=', providerId).executeTakeFirst();
  return (row as UserRow | undefined) ?? null;
}

/**
 * The columns the publishable role may read (migrations/063_users_rules.sql): a user as other
 * users' reads see it, under the users collection's access rules.
 */
export const PUBLIC_USER_COLUMNS = ['id', 'data', 'created_at', 'updated_at'] as const;
export type PublicUserRow = Pick<UserRow, (typeof PUBLIC_USER_COLUMNS)[number]>;

/** A user by username, as the caller's publishable scope sees users (the users rules' read policy). */
export async function findUserByUsername(tx: Tx, username: string): Promise<PublicUserRow | null> {
  const row = await tx
    .selectFrom('app_users')
    .select(PUBLIC_USER_COLUMNS)
    .where(sql`data ->> 'username'`, '=', username)
    .executeTakeFirst();
  return (row as PublicUserRow | undefined) ?? null;
}

/** Whether another user of the project holds this value of a unique users-schema field. */
export async function uniqueValueTaken(tx: Tx, projectId: string, field: string, value: string): Promise<boolean> {
  const row = await tx
    .selectFrom('app_user_unique_values')
    .select('user_id')
    .where('project_id', '=', projectId)
    .where('field', '=', field)
    .where('value', '=', sql<string>`plinth_unique_key(${value})`)
    .executeTakeFirst();
  return !!row;
}

/** Merges profile fields into the user's `data`: rows changed (0 when the users update rule does not admit the row). */
export async function updateUserData(tx: Tx, id: string, data: Record<string, unknown>, now: Date): Promise<number> {
  const res = await tx
    .updateTable('app_users')
    .set({ data: sql`data || ${JSON.stringify(data)}::jsonb` as never, updated_at: now })
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numUpdatedRows);
}

export async function setPasswordHash(tx: Tx, id: string, hash: string, now: Date): Promise<void> {
  await tx.updateTable('app_users').set({ password_hash: hash, updated_at: now }).where('id', '=', id).execute();
}

export async function markEmailVerified(tx: Tx, id: string, now: Date): Promise<void> {
  await tx.updateTable('app_users').set({ email_verified: true, updated_at: now }).where('id', '=', id).execute();
}

/** Links a provider identity to an existing user (and marks the email verified). */
export async function linkProvider(tx: Tx, id: string, provider: 'github' | 'google', providerId: string, extra: Record<string, unknown>, now: Date): Promise<UserRow> {
  const row = await tx
    .updateTable('app_users')
    .set({
      [provider === 'github' ? 'github_id' : 'google_id']: providerId,
      auth_providers: sql`(SELECT array_agg(DISTINCT p) FROM unnest(auth_providers || ARRAY[${provider}]::text[]) p)` as never,
      email_verified: true,
      data: sql`${JSON.stringify(extra)}::jsonb || data` as never,
      updated_at: now,
    })
    .where('id', '=', id)
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();
  return row as UserRow;
}

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * A page of users, newest first. `search`: part of the email, name or username (case-
 * insensitive), or an exact user id; `emailPrefix`: the email starts with it (case-insensitive).
 */
export async function listUsers(tx: Tx, limit: number, offset: number, search?: string, emailPrefix?: string): Promise<{ rows: UserRow[]; total: number }> {
  const pattern = search ? `%${likeEscape(search)}%` : null;
  const base = tx
    .selectFrom('app_users')
    .$if(pattern !== null, (qb) =>
      qb.where((eb) =>
        eb.or([
          eb('email', 'ilike', pattern!),
          eb(sql`data ->> 'name'`, 'ilike', pattern!),
          eb(sql`data ->> 'username'`, 'ilike', pattern!),
          eb('id', '=', search!),
        ]),
      ),
    )
    .$if(!!emailPrefix, (qb) => qb.where('email', 'ilike', `${likeEscape(emailPrefix!)}%`));
  const rows = await base.select(USER_COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
  const { total } = await base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  return { rows: rows as UserRow[], total: Number(total) };
}

/** What an administrator changes of an account (the secret key or the console: docs/auth.md "User administration"). */
export interface AccountChanges {
  email?: string;
  passwordHash?: string;
  emailVerified?: boolean;
  /** Merged into the profile, hidden and read-only fields included (the trigger still splits hidden ones off). */
  data?: Record<string, unknown>;
}

/**
 * Applies an administrator's changes in one statement; the row after them, or null when the
 * user is not in the scoped project. A new email makes an anonymous user a regular one; a taken
 * email fails on app_users_email_idx (the caller answers 409).
 */
export async function updateAccount(tx: Tx, id: string, c: AccountChanges, now: Date): Promise<UserRow | null> {
  const set: Record<string, unknown> = { updated_at: now };
  if (c.email !== undefined) Object.assign(set, { email: c.email, is_anonymous: false });
  if (c.passwordHash !== undefined) set.password_hash = c.passwordHash;
  if (c.emailVerified !== undefined) set.email_verified = c.emailVerified;
  if (c.data && Object.keys(c.data).length > 0) set.data = sql`data || ${JSON.stringify(c.data)}::jsonb`;
  const row = await tx.updateTable('app_users').set(set as never).where('id', '=', id).returning(USER_COLUMNS).executeTakeFirst();
  return (row as UserRow | undefined) ?? null;
}

export async function setUserDisabled(tx: Tx, id: string, at: Date | null, now: Date): Promise<void> {
  await tx.updateTable('app_users').set({ disabled_at: at, updated_at: now }).where('id', '=', id).execute();
}

export async function deleteUser(tx: Tx, id: string): Promise<boolean> {
  const res = await tx.deleteFrom('app_users').where('id', '=', id).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

// ---- one-time codes ----

export interface NewOtp { userId: string; projectId: string; purpose: UserOtpPurpose; codeHash: string; expiresAt: Date; now: Date }

export async function upsertOtp(tx: Tx, o: NewOtp): Promise<void> {
  await tx
    .insertInto('app_user_otps')
    .values({ user_id: o.userId, project_id: o.projectId, purpose: o.purpose, code_hash: o.codeHash, attempts: 0, expires_at: o.expiresAt, sent_at: o.now })
    .onConflict((oc) =>
      oc.columns(['user_id', 'purpose']).doUpdateSet({ code_hash: o.codeHash, attempts: 0, expires_at: o.expiresAt, sent_at: o.now }),
    )
    .execute();
}

export async function findOtp(tx: Tx, userId: string, purpose: UserOtpPurpose) {
  return tx
    .selectFrom('app_user_otps')
    .select(['code_hash', 'attempts', 'expires_at', 'sent_at'])
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .forUpdate()
    .executeTakeFirst();
}

export async function countOtpAttempt(tx: Tx, userId: string, purpose: UserOtpPurpose): Promise<void> {
  await tx
    .updateTable('app_user_otps')
    .set({ attempts: sql`attempts + 1` })
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .execute();
}

export async function deleteOtp(tx: Tx, userId: string, purpose: UserOtpPurpose): Promise<void> {
  await tx.deleteFrom('app_user_otps').where('user_id', '=', userId).where('purpose', '=', purpose).execute();
}

// ---- anonymous users ----

/**
 * Gives an anonymous user an email and a password: they stop being anonymous. Null when the
 * user is not (or no longer) anonymous. A taken email fails on app_users_email_idx.
 */
export async function linkEmailToAnonymous(tx: Tx, id: string, email: string, passwordHash: string, now: Date): Promise<UserRow | null> {
  const row = await tx
    .updateTable('app_users')
    .set({ email, password_hash: passwordHash, email_verified: false, is_anonymous: false, updated_at: now })
    .where('id', '=', id)
    .where('is_anonymous', '=', true)
    .returning(USER_COLUMNS)
    .executeTakeFirst();
  return (row as UserRow | undefined) ?? null;
}

/** A user who linked a credential (passkey, social identity) is no longer anonymous. */
export async function clearAnonymous(tx: Tx, id: string, now: Date): Promise<void> {
  await tx.updateTable('app_users').set({ is_anonymous: false, updated_at: now }).where('id', '=', id).where('is_anonymous', '=', true).execute();
}

/**
 * The clean-up of unused anonymous users (owner connection, every project): anonymous users
 * created before `cutoff` that nobody can sign in as any more (no session that is unrevoked
 * and unexpired, none used since `cutoff`) and that own no document and no file. At most
 * `limit` per call; returns how many were deleted (their sessions, codes and factors go with
 * them by foreign key).
 */
export async function deleteUnusedAnonymous(admin: Kysely<Database>, cutoff: Date, now: Date, limit: number): Promise<number> {
  const res = await sql`
    DELETE FROM app_users
     WHERE id IN (
       SELECT u.id FROM app_users u
        WHERE u.is_anonymous AND u.created_at < ${cutoff}
          AND NOT EXISTS (
            SELECT 1 FROM app_user_sessions s
             WHERE s.user_id = u.id AND ((s.revoked_at IS NULL AND s.expires_at > ${now}) OR s.last_used_at >= ${cutoff}))
          AND NOT EXISTS (SELECT 1 FROM files f WHERE f.project_id = u.project_id AND f.owner_id = u.id)
          AND NOT EXISTS (
            SELECT 1 FROM collections c
             WHERE c.project_id = u.project_id
               AND EXISTS (SELECT 1 FROM documents d WHERE d.collection_id = c.id AND d.owner_id = u.id))
        ORDER BY u.created_at
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
       AND is_anonymous`.execute(admin);
  return Number(res.numAffectedRows ?? 0);
}
