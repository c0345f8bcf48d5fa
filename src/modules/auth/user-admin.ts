/**
 * User administration (docs/auth.md "User administration"): list, get, create and update a
 * project's end users, for the project's secret key (/api/userAuth/admin/users) and its
 * operator (/api/projects/:projectId/users). One service for both; it knows no HTTP.
 *
 * - It runs as `plinth_api_full` (key kind `secret` or `operator`): the users collection's rules
 *   do not govern it and the trigger `app_users_protect_fields` lets it set `readOnly` fields,
 *   which is what makes `@auth.role` both trustworthy and settable (docs/rules.md).
 * - It sees and writes `hidden` fields, "owner" and "secret" alike (the trigger still keeps
 *   them out of `data`); it never returns a password hash.
 * - Every write is one transaction; every write is logged as an audit line (`users.admin`:
 *   who, project, user, action, the keys changed, never their values).
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { isUniqueViolation } from '../../db/errors.js';
import { Errors } from '../../lib/errors.js';
import { isObjectId } from '../../lib/ids.js';
import { hashPassword, randomPasswordHash } from '../../lib/passwords.js';
import type { ProjectRecord } from '../projects/cache.js';
import { AuthErrors } from './errors.js';
import { checkEmail, checkNewPassword } from './inputs.js';
import { mailInvitation } from './passwordless.js';
import { deleteOtp, findUserById, insertUser, listUsers, updateAccount, type AccountChanges, type UserRow } from './queries.js';
import { usersSchemaFor } from './schema.js';
import { revokeUserSessions } from './session-queries.js';
import { freeDerivedValues, rethrowTaken } from './unique.js';
import { adminUserData, toAdminUser } from './users.js';
import { enqueueAuthHooks } from '../functions/auth-events.js';

/** Who administers: the project's secret key, or its operator (their id goes into the audit line). */
export type UserAdmin = { kind: 'secret' } | { kind: 'operator'; operatorId: string };

const scopeOf = (projectId: string, by: UserAdmin) => ({ projectId, keyKind: by.kind === 'secret' ? ('secret' as const) : ('operator' as const) });

export interface UserListQuery {
  page: number;
  limit: number;
  /** Part of the email, name or username, or a user id. */
  q?: string;
  /** The email starts with this (case-insensitive). */
  email?: string;
}

export async function listProjectUsers(ctx: AppContext, projectId: string, by: UserAdmin, query: UserListQuery) {
  const { page, limit } = query;
  const q = query.q?.trim() || undefined;
  const email = query.email?.trim().toLowerCase() || undefined;
  const { rows, total } = await ctx.db.read(scopeOf(projectId, by), (db) => listUsers(db, limit, (page - 1) * limit, q, email));
  return { items: rows.map((r) => toAdminUser(r)), total, page, limit };
}

function checkUserId(userId: string): void {
  if (!isObjectId(userId)) throw Errors.invalid_id('Invalid user id.');
}

export async function getProjectUser(ctx: AppContext, projectId: string, by: UserAdmin, userId: string) {
  checkUserId(userId);
  const row = await ctx.db.read(scopeOf(projectId, by), (db) => findUserById(db, userId));
  if (!row) throw AuthErrors.app_user_not_found();
  return toAdminUser(row);
}

export interface CreateUserInput {
  email: string;
  /** None: the account gets an unusable password (an invitation, a social or passwordless sign-in, or a reset gives it a way in). */
  password?: string;
  emailVerified?: boolean;
  /** Mail an invitation (a passwordless sign-in valid 24 hours); only without a password. */
  invite?: boolean;
  /** Where the invitation's link opens (the project's site URL or a redirect URL, as for passwordless sign-in). */
  redirectTo?: string;
  /** Profile fields of the users schema, `readOnly` and `hidden` ones included. */
  data?: Record<string, unknown>;
}

export async function createProjectUser(ctx: AppContext, project: ProjectRecord, by: UserAdmin, input: CreateUserInput) {
  const schema = await usersSchemaFor(ctx, project.id);
  const email = checkEmail(input.email);
  if (input.invite === true && input.password !== undefined) throw AuthErrors.invite_with_password();
  const { data, derived } = adminUserData(schema, input.data ?? {}, { email });
  const passwordHash = input.password !== undefined ? await hashPassword(checkNewPassword(input.password)) : await randomPasswordHash();
  const user = await ctx.db
    .tenant(scopeOf(project.id, by), async (tx) => {
      await freeDerivedValues(tx, project.id, data, derived);
      const row = await insertUser(tx, { projectId: project.id, email, passwordHash, emailVerified: input.emailVerified === true, data, now: ctx.clock.now() });
      if (!row) throw AuthErrors.email_taken();
      if (input.invite === true) await mailInvitation(ctx, tx, project, { ...row, email }, input.redirectTo);
      await enqueueAuthHooks(ctx, tx, project.id, 'sign-up', row, 'admin');
      return row;
    })
    .catch(rethrowTaken);
  audit(ctx, by, project.id, user.id, 'create', { fields: Object.keys(data), password: input.password !== undefined, invited: input.invite === true });
  return toAdminUser(user, schema);
}

export interface UpdateUserInput {
  email?: string;
  /** A new password: the user's sessions are revoked, as for a password change. */
  password?: string;
  emailVerified?: boolean;
  /** Merged into the profile (`null` stores null); `readOnly` and `hidden` fields included. */
  data?: Record<string, unknown>;
}

/**
 * Applies the changes in one transaction. A new email must be free in the project (409
 * email_taken); it counts as unverified unless the same request sets `emailVerified`, and the
 * codes mailed to the old address (verification, reset) stop working, as do sign-in links
 * (passwordless.ts checks the account still holds the email they were sent to).
 */
export async function updateProjectUser(ctx: AppContext, project: ProjectRecord, by: UserAdmin, userId: string, input: UpdateUserInput) {
  checkUserId(userId);
  const schema = await usersSchemaFor(ctx, project.id);
  const changes: AccountChanges = {};
  if (input.email !== undefined) changes.email = checkEmail(input.email);
  if (input.password !== undefined) changes.passwordHash = await hashPassword(checkNewPassword(input.password));
  if (input.emailVerified !== undefined) changes.emailVerified = input.emailVerified;
  if (input.data !== undefined) changes.data = adminUserData(schema, input.data, null).data;
  const user = await ctx.db
    .tenant(scopeOf(project.id, by), async (tx: Tx) => {
      const before = await findUserById(tx, userId);
      if (!before) throw AuthErrors.app_user_not_found();
      const now = ctx.clock.now();
      const emailChanged = changes.email !== undefined && changes.email !== before.email;
      if (!emailChanged) delete changes.email;
      if (emailChanged && changes.emailVerified === undefined) changes.emailVerified = false;
      const after = await updateAccount(tx, userId, changes, now);
      if (!after) throw AuthErrors.app_user_not_found();
      if (emailChanged) {
        await deleteOtp(tx, userId, 'verify_email');
        await deleteOtp(tx, userId, 'reset_password');
      }
      if (changes.passwordHash !== undefined) await revokeUserSessions(tx, userId, now);
      return after;
    })
    .catch((err: unknown) => {
      if (isUniqueViolation(err) && (err as { constraint?: unknown }).constraint === 'app_users_email_idx') throw AuthErrors.email_taken();
      return rethrowTaken(err);
    });
  audit(ctx, by, project.id, userId, 'update', {
    fields: Object.keys(changes.data ?? {}), email: changes.email !== undefined, password: changes.passwordHash !== undefined,
    ...(changes.emailVerified !== undefined ? { emailVerified: changes.emailVerified } : {}),
  });
  return toAdminUser(user as UserRow, schema);
}

function audit(ctx: AppContext, by: UserAdmin, projectId: string, userId: string, action: 'create' | 'update', what: Record<string, unknown>): void {
  const actor = by.kind === 'secret' ? { secretKey: true } : { operatorId: by.operatorId };
  ctx.log.info({ audit: 'users.admin', action, ...actor, projectId, userId, ...what }, `end user ${action}d by ${by.kind === 'secret' ? 'the secret key' : 'the operator'}`);
}
