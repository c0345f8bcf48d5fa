/**
 * Every background task, by name. Each domain contributes its handlers here (one line each);
 * handlers receive the AppContext and must be idempotent (jobs can be retried).
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { dropPartitionsTask } from '../modules/collections/cleanup.js';
import { sweepTask } from '../modules/storage/sweep.js';
import { mailSendTask } from '../modules/mail/worker.js';

const taskFactories: Record<string, (ctx: AppContext) => Task> = {
  'storage.sweep': sweepTask,
  'mail.send': mailSendTask,
  'collections.drop_partitions': dropPartitionsTask,
};

export function buildTaskList(ctx: AppContext): Record<string, Task> {
  return Object.fromEntries(Object.entries(taskFactories).map(([name, make]) => [name, make(ctx)]));
}
