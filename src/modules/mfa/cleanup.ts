/**
 * Expired MFA challenges and WebAuthn ceremonies, of end users and of operators, are deleted by
 * a graphile-worker crontab job (src/worker/tasks.ts), once per schedule for the whole cluster.
 * The flows refuse expired rows themselves; this only keeps the tables small.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteExpiredOperatorChallenges } from '../operators/passkey-queries.js';
import { deleteExpiredChallenges } from './queries.js';

export const deleteExpiredChallengesTask = (ctx: AppContext): Task => async () => {
  const now = ctx.clock.now();
  await deleteExpiredChallenges(ctx.db.admin, now);
  await deleteExpiredOperatorChallenges(ctx.db.admin, now);
};
