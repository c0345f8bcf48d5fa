/**
 * Scheduled and manual backups (docs/backup.md "Scheduled backups"): the archive of the export
 * (archive.ts, format v3, one consistent snapshot), sealed with the project's key
 * (src/lib/sealed-stream.ts) and streamed to the storage backend: the project's own bucket when
 * it has one, else the node's storage, under `_backups/<projectId>/` (a path no file route
 * serves: file paths have exactly two segments, paths.ts). Memory is bounded whatever the
 * project's size: the export writes page by page with backpressure, the seal holds one 64 KiB
 * frame, the local store writes a temp file and S3 one 8 MB part.
 *
 * The job workers run it (`backups:run`, tasks.ts). A failed attempt is recorded (status
 * `retrying`, its error code, attempts) and thrown, so graphile-worker retries it with backoff;
 * the last one leaves `failed`. Each success prunes the project's backups by retention.
 */
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { objectId } from '../../lib/ids.js';
import { sealStream } from '../../lib/sealed-stream.js';
import { tickOf } from '../functions/schedules.js';
import { backendFor, storeCall } from '../storage/backends.js';
import type { Counts } from './archive.js';
import { BackupErrors } from './errors.js';
import { exportProject } from './export-service.js';
import { projectKey } from './keys.js';
import { failureOf, Progress } from './operations.js';
import { backupsFolder, removeStoredBackups } from './removal.js';
import { backupsToKeep } from './retention.js';
import { dueProjects, effectiveSchedule } from './schedule.js';
import * as bq from './backup-queries.js';

/** Failed attempts stay listed this long. */
const FAILED_KEPT_MS = 14 * 86_400_000;

export const backupPath = (projectId: string, backupId: string) => `${backupsFolder(projectId)}/${backupId}.plbk`;

/** Enqueues the backups due at the minute `tick` (once per minute for the whole cluster). */
export async function enqueueDueBackups(ctx: AppContext, tick: number): Promise<string[]> {
  const due = (await dueProjects(ctx, tick)).map((projectId) => ({ projectId, backupId: objectId(tick), operationId: objectId(tick) }));
  return bq.enqueueScheduledBackups(ctx.db.admin, new Date(tick), due, ctx.config.backups.maxAttempts);
}

/** "Run now": one backup at a time per project (409 while one is queued or running). */
export async function requestBackup(ctx: AppContext, projectId: string): Promise<{ backupId: string; operationId: string }> {
  const backupId = objectId();
  const operationId = objectId();
  await ctx.db.admin.transaction().execute(async (tx) => {
    await bq.lockProjectBackups(tx, projectId);
    if (await bq.hasActiveBackup(tx, projectId)) throw BackupErrors.backup_in_progress();
    await bq.enqueueManualBackup(tx, projectId, backupId, operationId, ctx.clock.now(), ctx.config.backups.maxAttempts);
  });
  return { backupId, operationId };
}

/** The export, sealed, into the store; the stored bytes and the archive's counts. */
async function writeSealed(ctx: AppContext, project: { id: string; name: string }, store: ReturnType<typeof backendFor>, path: string, progress: Progress): Promise<{ size: number; counts: Counts }> {
  const key = await projectKey(ctx, project.id);
  let counts: Counts | null = null;
  const archive = await exportProject(ctx, project, {
    onProgress: (written, total) => progress.report('writing', Math.min(99, (written / total) * 100)),
    onEnd: (c) => (counts = c),
  });
  const sealed = sealStream(key, project.id);
  // The export into the seal; a store that fails destroys the seal, which ends the export's snapshot.
  const sealing = pipeline(archive, sealed);
  const storing = storeCall(ctx, 'backup write', { projectId: project.id, path }, () => store.driver.writeStream(path, sealed as Readable, 'application/octet-stream'))
    .catch((err: unknown) => {
      sealed.destroy();
      archive.destroy();
      throw err;
    });
  const [size] = await Promise.all([storing, sealing]);
  if (!counts) throw BackupErrors.backup_failed('The export ended without its end record.');
  return { size, counts };
}

/** One attempt of a backup (the job's handler). Throws when a retry should follow. */
export async function runBackup(ctx: AppContext, backupId: string): Promise<void> {
  const row = await bq.startAttempt(ctx.db.admin, backupId, ctx.clock.now());
  if (!row) return; // done already, or deleted with its project
  const op = await bq.operationOfBackup(ctx.db.admin, backupId);
  const progress = new Progress(ctx, op?.id ?? '');
  if (op) progress.report('starting', 0, { force: true, status: 'running', attempts: row.attempts });
  const path = backupPath(row.project_id, row.id);
  let provider: 'internal' | 'external' = 'internal';
  try {
    const project = await bq.projectForBackup(ctx.db.admin, row.project_id);
    const record = await ctx.projects.byId(row.project_id);
    if (!project || !record) return;
    const store = backendFor(ctx, record);
    provider = store.provider;
    const { size, counts } = await writeSealed(ctx, { id: project.id, name: project.name }, store, path, progress);
    if (!(await bq.backupSucceeded(ctx.db.admin, row.id, { provider, path, size, counts, at: ctx.clock.now() }))) {
      // The project was deleted while this run wrote (removal.ts swept its folder before): no
      // row names the object, so it goes too.
      await storeCall(ctx, 'backup remove', { projectId: row.project_id, backupId: row.id }, () => store.driver.remove([path]))
        .catch((err: unknown) => ctx.log.warn({ err, projectId: row.project_id, backupId: row.id, path }, 'backup of a deleted project: its object could not be removed'));
      return;
    }
    if (op) await progress.done('succeeded', { phase: 'done', detail: { size, counts } });
    ctx.log.info({ projectId: row.project_id, backupId: row.id, size, documents: counts.documents, attempt: row.attempts }, 'backup stored');
    await prune(ctx, project, record).catch((err) => ctx.log.warn({ err, projectId: row.project_id }, 'backup retention: pruning failed (tried again after the next backup)'));
  } catch (err) {
    const final = row.attempts >= row.max_attempts;
    const { code, message } = failureOf(err);
    ctx.log.warn({ err, projectId: row.project_id, backupId: row.id, attempt: row.attempts, final }, 'backup attempt failed');
    await bq.backupFailed(ctx.db.admin, row.id, { final, code, message, at: ctx.clock.now() });
    if (op) await progress.done(final ? 'failed' : 'retrying', { phase: final ? 'failed' : 'waiting to retry', code, message });
    // A failed write leaves nothing behind (writeStream); graphile-worker retries unless this was the last attempt.
    if (!final) throw err;
  }
}

/** Retention: the backups not kept are deleted, object first (removal.ts); failed attempts after two weeks. */
async function prune(ctx: AppContext, project: { id: string; plan: string }, record: NonNullable<Awaited<ReturnType<AppContext['projects']['byId']>>>): Promise<void> {
  const schedule = effectiveSchedule(ctx, project.id, project.plan, await bq.scheduleOf(ctx.db.admin, project.id));
  const stored = await bq.succeededBackups(ctx.db.admin, project.id);
  const keep = backupsToKeep(stored, schedule.keepDaily, schedule.keepWeekly);
  await removeStoredBackups(ctx, ctx.db.admin, record, stored.filter((b) => !keep.has(b.id)));
  await bq.deleteFailedBefore(ctx.db.admin, project.id, new Date(ctx.clock.now().getTime() - FAILED_KEPT_MS));
}

export const scheduleBackupsTask = (ctx: AppContext): Task => async (payload) => {
  await enqueueDueBackups(ctx, tickOf(payload, ctx.clock.now().getTime()));
};

export const runBackupTask = (ctx: AppContext): Task => async (payload) => {
  const backupId = (payload as { backupId?: unknown } | null)?.backupId;
  if (typeof backupId === 'string') await runBackup(ctx, backupId);
};
