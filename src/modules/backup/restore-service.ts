/**
 * Stored backups: listing, download (opened: the archive as an export gives it) and restore
 * (docs/backup.md "Restore"). A restore runs in the job workers (`backups:restore`) as the
 * import does (import-service.ts, one transaction, all or nothing): over the same project
 * (`replace`, after a confirmation naming the project whose contents it replaces) or into a new
 * project of the same operator (a copy: new document and user ids, `newIds`), whose file objects
 * are then copied from the source's folder on the node's storage. Knows no HTTP.
 */
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { objectId } from '../../lib/ids.js';
import { openStream, SealedStreamError } from '../../lib/sealed-stream.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { createProject } from '../projects/service.js';
import { backendOfFile, platformDriver, storeCall } from '../storage/backends.js';
import { BackupErrors } from './errors.js';
import { importProject } from './import-service.js';
import { existingKey } from './keys.js';
import { failureOf, operationView, Progress, type OperationView } from './operations.js';
import * as bq from './backup-queries.js';

export interface BackupView {
  id: string;
  trigger: 'schedule' | 'manual';
  status: bq.BackupRow['status'];
  attempts: number;
  maxAttempts: number;
  error: { code: string; message: string } | null;
  /** Bytes stored (sealed). */
  size: number | null;
  counts: { collections: number; documents: number; users: number; files: number } | null;
  storage: 'internal' | 'external' | null;
  createdAt: string;
  finishedAt: string | null;
}

export function backupView(r: bq.BackupRow): BackupView {
  return {
    id: r.id,
    trigger: r.trigger,
    status: r.status,
    attempts: r.attempts,
    maxAttempts: r.max_attempts,
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    size: r.size_bytes === null ? null : Number(r.size_bytes),
    counts: r.counts ? { collections: r.counts.collections, documents: r.counts.documents, users: r.counts.users, files: r.counts.files } : null,
    storage: r.provider,
    createdAt: r.created_at.toISOString(),
    finishedAt: r.finished_at ? r.finished_at.toISOString() : null,
  };
}

export async function listBackups(ctx: AppContext, projectId: string): Promise<BackupView[]> {
  return (await bq.listBackups(ctx.db.admin, projectId, 200)).map(backupView);
}

async function storedBackup(ctx: AppContext, projectId: string, backupId: string): Promise<bq.BackupRow> {
  const row = await bq.backupOf(ctx.db.admin, projectId, backupId);
  if (!row) throw BackupErrors.backup_not_found();
  if (row.status !== 'succeeded' || !row.object_path || !row.provider) throw BackupErrors.backup_not_ready();
  return row;
}

/** One backup as the list shows it (404 `backup_not_found` for another project's id). */
export async function getBackup(ctx: AppContext, projectId: string, backupId: string): Promise<BackupView> {
  const row = await bq.backupOf(ctx.db.admin, projectId, backupId);
  if (!row) throw BackupErrors.backup_not_found();
  return backupView(row);
}

/** One backup, with what a restore over the project would replace (the confirmation dialog). */
export async function describeBackup(ctx: AppContext, project: { id: string; name: string }, backupId: string) {
  const row = await bq.backupOf(ctx.db.admin, project.id, backupId);
  if (!row) throw BackupErrors.backup_not_found();
  return { ...backupView(row), replaces: { project: { id: project.id, name: project.name }, counts: await bq.projectCounts(ctx.db.admin, project.id) } };
}

/** The stored object, opened: the archive (gzip NDJSON) as a stream. A tampered object fails the stream. */
export async function openBackup(ctx: AppContext, projectId: string, backupId: string, onSealedBytes?: (n: number) => void): Promise<{ stream: Readable; row: bq.BackupRow }> {
  const row = await storedBackup(ctx, projectId, backupId);
  const record = await ctx.projects.byId(projectId);
  const driver = record ? backendOfFile(ctx, record, row.provider!) : null;
  if (!driver) throw BackupErrors.backup_unreadable('The bucket this backup is stored in is no longer configured for the project.');
  const key = await existingKey(ctx, projectId);
  const sealed = await storeCall(ctx, 'backup read', { projectId, backupId }, () => driver.readStream(row.object_path!));
  if (!sealed) throw BackupErrors.backup_unreadable('The stored backup is missing from its storage.');
  if (onSealedBytes) sealed.on('data', (c: Buffer) => onSealedBytes(c.length));
  const opened = openStream(key, projectId);
  // A failure of either (a read error, a frame that does not authenticate) ends `opened` with it.
  pipeline(sealed, opened).catch((err: unknown) => ctx.log.warn({ err, projectId, backupId }, 'stored backup could not be opened'));
  return { stream: opened, row };
}

export interface RestoreInput {
  into: 'same' | 'new';
  /** Into the same project: its name, exactly, naming what is replaced. */
  confirm?: string;
  /** Into a new project: its name (default: "<name> (restored <date>)"). */
  name?: string;
}

/**
 * Queues a restore. Into the same project the confirmation must be the project's name, else 400
 * `restore_confirmation_mismatch` and nothing is queued; into a new project, the project is
 * created now (the plan's project limit applies) and filled by the job.
 */
export async function requestRestore(ctx: AppContext, operator: OperatorIdentity, project: { id: string; name: string }, backupId: string, input: RestoreInput): Promise<OperationView> {
  const id = objectId();
  // The backup is held (FOR SHARE) until the restore is queued: a deletion of it (removal.ts)
  // waits, then finds the queued restore and refuses; one that came first leaves nothing (404).
  await ctx.db.admin.transaction().execute(async (tx) => {
    const row = await bq.lockBackup(tx, project.id, backupId, 'share');
    if (!row) throw BackupErrors.backup_not_found();
    if (row.status !== 'succeeded' || !row.object_path || !row.provider) throw BackupErrors.backup_not_ready();
    let target = project.id;
    if (input.into === 'same') {
      if ((input.confirm ?? '').trim() !== project.name.trim()) {
        const counts = await bq.projectCounts(tx, project.id);
        throw BackupErrors.restore_confirmation_mismatch(
          `Type the project's name to confirm: the restore replaces all of "${project.name}" (${counts.collections} collections, ${counts.documents} documents, ${counts.users} users, ${counts.files} files) with the backup of ${row.created_at.toISOString()}.`,
          { replaces: { project: project.name, counts } },
        );
      }
    } else {
      const name = input.name?.trim() || `${project.name} (restored ${row.created_at.toISOString().slice(0, 10)})`;
      target = (await createProject(ctx, operator, { name })).project.id;
    }
    await bq.enqueueRestore(tx, { id, projectId: project.id, backupId, targetProjectId: target, mode: input.into, now: ctx.clock.now(), maxAttempts: 1 });
  });
  return operationView((await bq.operationById(ctx.db.admin, id))!);
}

/** A copy's file objects: from the source's folder to the target's, streamed, on the node's storage. */
async function copyFileObjects(ctx: AppContext, sourceId: string, targetId: string): Promise<{ copied: number; missing: number }> {
  const driver = platformDriver(ctx);
  let copied = 0;
  let missing = 0;
  for (let after = ''; ;) {
    const page = await bq.internalFilesAfter(ctx.db.admin, targetId, after, 200);
    for (const f of page) {
      const from = `${sourceId}/${f.path.slice(f.path.indexOf('/') + 1)}`;
      const body = await driver.readStream(from);
      if (!body) {
        missing++;
        continue;
      }
      await driver.writeStream(f.path, body, 'application/octet-stream');
      copied++;
    }
    if (page.length < 200) return { copied, missing };
    after = page[page.length - 1]!.id;
  }
}

/** The restore job: the backup opened and imported, with progress. One attempt (a failed import changed nothing). */
export async function runRestore(ctx: AppContext, operationId: string): Promise<void> {
  const op = await bq.operationById(ctx.db.admin, operationId);
  if (!op || op.status !== 'queued' || !op.backup_id || !op.target_project_id) return;
  const progress = new Progress(ctx, op.id);
  progress.report('reading', 0, { force: true, status: 'running', attempts: op.attempts + 1 });
  const into = (op.detail as { into?: string } | null)?.into === 'new' ? 'new' : 'same';
  try {
    const owner = await bq.projectForBackup(ctx.db.admin, op.target_project_id);
    if (!owner) throw BackupErrors.backup_not_found('The project to restore into no longer exists.');
    let read = 0;
    const { stream, row } = await openBackup(ctx, op.project_id, op.backup_id, (n) => {
      read += n;
      progress.report('restoring', Math.min(95, (read / Math.max(1, Number(row.size_bytes))) * 95));
    });
    const report = await importProject(ctx, { id: op.target_project_id, plan: owner.plan === 'pro' ? 'pro' : 'free', operatorId: owner.owner_id }, stream, {
      dryRun: false, newIds: into === 'new', replace: into === 'same', signal: new AbortController().signal,
    });
    let files: { copied: number; missing: number } | null = null;
    if (into === 'new' && report.counts.files > 0) {
      progress.report('copying files', 96, { force: true });
      files = await copyFileObjects(ctx, op.project_id, op.target_project_id);
    }
    await progress.done('succeeded', { phase: 'done', detail: { into, counts: report.counts, notes: report.notes, files } });
    ctx.log.info({ projectId: op.project_id, backupId: op.backup_id, target: op.target_project_id, into }, 'backup restored');
  } catch (err) {
    const { code, message } = failureOf(err instanceof SealedStreamError ? BackupErrors.backup_unreadable() : err, 'restore_failed');
    ctx.log.warn({ err, projectId: op.project_id, backupId: op.backup_id, into }, 'restore failed');
    await progress.done('failed', { phase: 'failed', code, message });
  }
}

export const restoreTask = (ctx: AppContext): Task => async (payload) => {
  const id = (payload as { operationId?: unknown } | null)?.operationId;
  if (typeof id === 'string') await runRestore(ctx, id);
};
