/**
 * Clean-ups of the end-user tables, run by graphile-worker's crontab (src/worker/tasks.ts) once
 * per schedule for the whole cluster:
 *
 * - expired passwordless sign-ins (the flows refuse them anyway; this keeps the table small);
 * - unused anonymous users. "Unused" (docs/auth.md "Anonymous users"): still anonymous,
 *   created more than ANONYMOUS_RETENTION_DAYS ago, no session that could still be refreshed
 *   (every one revoked or expired) and none used within that period, and owning no document
 *   and no file. Such a guest can never sign in again (a guest has no credential but its
 *   refresh token) and nothing of theirs would be lost. Guests who own data are kept.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteExpiredPasswordless } from './passwordless-queries.js';
import { deleteUnusedAnonymous } from './queries.js';

export const ANONYMOUS_RETENTION_DAYS = 30;
const BATCH = 500;
const MAX_BATCHES = 20;

export const deleteExpiredPasswordlessTask = (ctx: AppContext): Task => async () => {
  await deleteExpiredPasswordless(ctx.db.admin, ctx.clock.now());
};

/** Deletes unused anonymous users in batches (at most 10 000 a run; the next run continues). */
export async function removeUnusedAnonymousUsers(ctx: AppContext): Promise<number> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - ANONYMOUS_RETENTION_DAYS * 86_400_000);
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await deleteUnusedAnonymous(ctx.db.admin, cutoff, now, BATCH);
    total += n;
    if (n < BATCH) break;
  }
  if (total) ctx.log.info({ deleted: total }, 'unused anonymous users removed');
  return total;
}

export const deleteUnusedAnonymousTask = (ctx: AppContext): Task => async () => {
  await removeUnusedAnonymousUsers(ctx);
};
