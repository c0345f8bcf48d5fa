/**
 * Expired OAuth sign-in states and exchange codes are deleted by a graphile-worker crontab job
 * (src/worker/tasks.ts), once per schedule for the whole cluster. Expired rows are refused by
 * the flows themselves (they check `expires_at`); this only keeps the tables small.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteExpiredStates } from './queries.js';

export const deleteExpiredStatesTask = (ctx: AppContext): Task => async () => {
  await deleteExpiredStates(ctx.db.admin, ctx.clock.now());
};
