/**
 * Expired idempotency keys (older than 24 h) are deleted by a graphile-worker crontab job
 * (src/worker/tasks.ts), once per schedule for the whole cluster. An expired key is already
 * refused as stale by the claim (service.ts); this only keeps the table small.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { deleteExpiredKeys } from './queries.js';
import { KEY_TTL_MS } from './service.js';

export const deleteExpiredKeysTask = (ctx: AppContext): Task => async () => {
  await deleteExpiredKeys(ctx.db.admin, new Date(ctx.clock.now().getTime() - KEY_TTL_MS));
};
