/**
 * Every background task, by name. Each domain contributes its handlers here (one line each);
 * handlers receive the AppContext and must be idempotent (jobs can be retried).
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../context.js';
import { dropPartitionsTask } from '../modules/collections/cleanup.js';
import { sweepTask } from '../modules/storage/sweep.js';
import { mailSendTask } from '../modules/mail/worker.js';
import { deleteExpiredStatesTask } from '../modules/social/cleanup.js';
import { deleteExpiredChallengesTask } from '../modules/mfa/cleanup.js';
import { sweepChangesTask } from '../modules/realtime/retention.js';
import { deliverTask, DELIVER_TASK } from '../modules/webhooks/delivery.js';
import { dispatchTask } from '../modules/webhooks/dispatcher.js';
import { deleteExpiredKeysTask } from '../modules/idempotency/cleanup.js';
import { trimRequestLogTask } from '../modules/logs/cleanup.js';
import { trimInvocationsTask } from '../modules/functions/cleanup.js';
import { trimAuditTask } from '../modules/audit/cleanup.js';
import { sampleUsageTask, trimUsageTask } from '../modules/usage/sample.js';
import { ALERT_WEBHOOK_TASK, alertWebhookTask, checkAlertsTask } from '../modules/usage/alerts.js';
import { runHookTask } from '../modules/functions/run-task.js';
import { RUN_TASK } from '../modules/functions/job-queries.js';
import { scheduleTask } from '../modules/functions/schedules.js';
import { runBackupTask, scheduleBackupsTask } from '../modules/backup/run-service.js';
import { restoreTask } from '../modules/backup/restore-service.js';
import { RESTORE_TASK, RUN_BACKUP_TASK } from '../modules/backup/backup-queries.js';
import { deleteExpiredPasswordlessTask, deleteUnusedAnonymousTask } from '../modules/auth/anonymous-cleanup.js';

const taskFactories: Record<string, (ctx: AppContext) => Task> = {
  'storage.sweep': sweepTask,
  'mail.send': mailSendTask,
  'collections.drop_partitions': dropPartitionsTask,
  // Crontab task names cannot contain dots (graphile-worker's crontab grammar): a colon instead.
  'social:delete_expired_states': deleteExpiredStatesTask,
  'mfa:delete_expired_challenges': deleteExpiredChallengesTask,
  'realtime:sweep_changes': sweepChangesTask,
  [DELIVER_TASK]: deliverTask,
  'webhooks:dispatch': dispatchTask,
  'idempotency:delete_expired': deleteExpiredKeysTask,
  'auth:delete_expired_passwordless': deleteExpiredPasswordlessTask,
  'auth:delete_unused_anonymous': deleteUnusedAnonymousTask,
  'logs:trim_requests': trimRequestLogTask,
  'functions:trim_invocations': trimInvocationsTask,
  'audit:trim': trimAuditTask,
  'usage:sample': sampleUsageTask,
  'usage:trim': trimUsageTask,
  'usage:check_alerts': checkAlertsTask,
  [ALERT_WEBHOOK_TASK]: alertWebhookTask,
  [RUN_TASK]: runHookTask,
  'functions:schedule': scheduleTask,
  'backups:schedule': scheduleBackupsTask,
  [RUN_BACKUP_TASK]: runBackupTask,
  [RESTORE_TASK]: restoreTask,
};

/**
 * Periodic clean-ups, in graphile-worker's crontab format: each runs once per schedule for the
 * whole cluster, however many worker processes there are.
 */
export const CRONTAB = [
  '*/10 * * * * social:delete_expired_states',
  '*/10 * * * * mfa:delete_expired_challenges',
  '7 * * * * realtime:sweep_changes',
  '* * * * * webhooks:dispatch',
  '17 * * * * idempotency:delete_expired',
  '*/10 * * * * auth:delete_expired_passwordless',
  '37 * * * * auth:delete_unused_anonymous',
  '*/5 * * * * logs:trim_requests',
  '*/10 * * * * functions:trim_invocations',
  '23 3 * * * audit:trim',
  // usage history (src/modules/usage): bytes and mail sampled, old hours trimmed, alerts checked
  '*/10 * * * * usage:sample',
  '41 2 * * * usage:trim',
  '*/5 * * * * usage:check_alerts',
  // projects' schedules: each minute's due runs, enqueued once (src/modules/functions/schedules.ts)
  '* * * * * functions:schedule',
  // projects' backup schedules: each minute's due backups, enqueued once (src/modules/backup/run-service.ts)
  '* * * * * backups:schedule',
].join('\n');

export function buildTaskList(ctx: AppContext): Record<string, Task> {
  return Object.fromEntries(Object.entries(taskFactories).map(([name, make]) => [name, make(ctx)]));
}
