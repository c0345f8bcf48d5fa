/**
 * SQL of passwordless sign-ins in flight (app_user_passwordless, migrations/055), run in the
 * project's tenant scope; the expiry sweep takes the owner connection.
 */
import { sql, type Kysely } from 'kysely';
import type { Tx } from '../../db/pool.js';
import type { Database } from '../../database.js';

export interface NewPasswordless {
  projectId: string;
  email: string;
  userId: string | null;
  linkHash: string;
  codeHash: string;
  signupData: Record<string, unknown>;
  expiresAt: Date;
  now: Date;
}

export interface PasswordlessRow {
  email: string;
  user_id: string | null;
  code_hash: string;
  attempts: number;
  signup_data: Record<string, unknown>;
  expires_at: Date;
}

const COLUMNS = ['email', 'user_id', 'code_hash', 'attempts', 'signup_data', 'expires_at'] as const;

/** Stores a sign-in for the email, replacing any earlier one (its link and code stop working). */
export async function upsertPasswordless(db: Tx, p: NewPasswordless): Promise<void> {
  const values = {
    user_id: p.userId, link_hash: p.linkHash, code_hash: p.codeHash, attempts: 0,
    signup_data: JSON.stringify(p.signupData), expires_at: p.expiresAt, created_at: p.now,
  };
  await db
    .insertInto('app_user_passwordless')
    .values({ project_id: p.projectId, email: p.email, ...values })
    .onConflict((oc) => oc.columns(['project_id', 'email']).doUpdateSet(values))
    .execute();
}

/** Takes the sign-in of a magic link out (single use: of two concurrent uses one gets the row). */
export async function takeByLink(db: Tx, projectId: string, linkHash: string): Promise<PasswordlessRow | null> {
  const row = await db
    .deleteFrom('app_user_passwordless')
    .where('project_id', '=', projectId)
    .where('link_hash', '=', linkHash)
    .returning(COLUMNS)
    .executeTakeFirst();
  return (row as PasswordlessRow | undefined) ?? null;
}

/** The sign-in of an email, locked for the code check. */
export async function findForCode(tx: Tx, projectId: string, email: string): Promise<PasswordlessRow | null> {
  const row = await tx
    .selectFrom('app_user_passwordless')
    .select(COLUMNS)
    .where('project_id', '=', projectId)
    .where('email', '=', email)
    .forUpdate()
    .executeTakeFirst();
  return (row as PasswordlessRow | undefined) ?? null;
}

export async function countCodeAttempt(tx: Tx, projectId: string, email: string): Promise<void> {
  await tx
    .updateTable('app_user_passwordless')
    .set({ attempts: sql`attempts + 1` })
    .where('project_id', '=', projectId)
    .where('email', '=', email)
    .execute();
}

export async function deletePasswordless(tx: Tx, projectId: string, email: string): Promise<void> {
  await tx.deleteFrom('app_user_passwordless').where('project_id', '=', projectId).where('email', '=', email).execute();
}

/** The crontab sweep: expired sign-ins of every project (owner connection). */
export async function deleteExpiredPasswordless(admin: Kysely<Database>, now: Date): Promise<number> {
  const res = await admin.deleteFrom('app_user_passwordless').where('expires_at', '<=', now).executeTakeFirst();
  return Number(res.numDeletedRows);
}
