/**
 * Expired MFA challenges and WebAuthn ceremonies are deleted by a graphile-worker crontab job
 * (src/worker/tasks.ts), once per schedule for the whole cluster. The flows refuse expired rows
 * themselves; this only keeps the tables small.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteExpiredChallenges } from './queries.js';

export const deleteExpiredChallengesTask = (ctx: AppContext): Task => async () => {
  await deleteExpiredChallenges(ctx.db.admin, ctx.clock.now());
};
