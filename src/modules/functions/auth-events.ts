/**
 * After-hooks on auth events (docs/functions.md "After-hooks"): sign-up (every method),
 * sign-in (a session started: password, magic link or code, social or OIDC, passkey, a
 * completed second factor) and a user's deletion. Enqueued in the transaction that writes the
 * user or the session (a tenant one: the job goes through plinth_add_job), so a hook runs
 * exactly when the sign-up, sign-in or deletion committed. Costs a cache lookup when no hook
 * listens.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { objectId } from '../../lib/ids.js';
import { findUserById, type UserRow } from '../auth/queries.js';
import { usersSchemaFor } from '../auth/schema.js';
import { toUser } from '../auth/users.js';
import { MAX_ATTEMPTS, RUN_TASK, type RunJob } from './job-queries.js';
import type { AUTH_EVENTS } from './triggers.js';

export type AuthEvent = (typeof AUTH_EVENTS)[number];
export type AuthMethod = 'password' | 'magic-link' | 'code' | 'social' | 'oidc' | 'guest' | 'passkey' | 'mfa' | 'admin';

/** The user as an after-hook sees it: what the user sees of themself (no password, no hidden field). */
async function userOf(ctx: AppContext, projectId: string, row: UserRow): Promise<Record<string, unknown>> {
  const schema = await usersSchemaFor(ctx, projectId).catch(() => undefined);
  if (!schema) return { id: row.id, email: row.email, isAnonymous: row.is_anonymous, createdAt: row.created_at.toISOString() };
  const { _id: _, ...rest } = toUser(row, schema);
  return { id: row.id, ...rest };
}

/** `user`: the row, or its id (read in `tx` only when a hook listens). */
export async function enqueueAuthHooks(ctx: AppContext, tx: Tx, projectId: string, type: AuthEvent, user: UserRow | string, method: AuthMethod): Promise<void> {
  const hooks = await ctx.functions.registry.matching(projectId, 'after', (t) => Array.isArray(t.auth) && t.auth.includes(type));
  if (hooks.length === 0) return;
  const row = typeof user === 'string' ? await findUserById(tx, user) : user;
  if (!row) return;
  const id = `evt_${objectId()}`;
  const event = { id, type, user: await userOf(ctx, projectId, row), method, at: ctx.clock.now().toISOString() };
  for (const fn of hooks) {
    const job: RunJob = { projectId, functionId: fn.id, kind: 'after', trigger: `after.${type}`, event };
    await ctx.queue.add(RUN_TASK, job, { maxAttempts: MAX_ATTEMPTS, jobKey: `fn:${fn.id}:${id}` }, tx);
  }
}
