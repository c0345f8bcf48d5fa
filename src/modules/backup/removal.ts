/**
 * Stored backups removed (docs/backup.md "Deleting a backup"): by retention (run-service.ts), by
 * an admin deleting one (DELETE …/backups/:backupId), and with their project. One code path for
 * the three: each object is removed from the backend it was written to, then its row, so a row
 * never names an object that is gone. Knows no HTTP.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import type { ProjectRecord } from '../projects/cache.js';
import { backendOfFile, platformDriver, storeCall } from '../storage/backends.js';
import { BackupErrors } from './errors.js';
import { backupView, type BackupView } from './restore-service.js';
import * as bq from './backup-queries.js';

type Project = Pick<ProjectRecord, 'id' | 'settings' | 'secrets'>;

/** Where a project's stored backups live, on either backend (run-service.ts's backupPath). */
export const backupsFolder = (projectId: string) => `_backups/${projectId}`;

/**
 * Removes the backups' objects, each from its backend, then the rows of those removed. A backup
 * whose bucket is no longer configured for the project loses its row (nothing can read it any
 * more; the object stays in that bucket, logged). An object that cannot be removed keeps its row
 * (removal is tried again by the next caller) and, after the others were done, its error is thrown.
 */
export async function removeStoredBackups(ctx: AppContext, db: Kysely<Database>, project: Project, backups: readonly bq.StoredBackup[]): Promise<void> {
  const removed: string[] = [];
  let failure: unknown = null;
  for (const b of backups) {
    const driver = backendOfFile(ctx, project, b.provider);
    if (!driver) {
      ctx.log.warn({ projectId: project.id, backupId: b.id, path: b.object_path }, 'backup removed: its bucket is no longer configured, the object stays there');
    } else {
      try {
        await storeCall(ctx, 'backup remove', { projectId: project.id, backupId: b.id }, () => driver.remove([b.object_path]));
      } catch (err) {
        failure ??= err;
        continue;
      }
    }
    removed.push(b.id);
  }
  await bq.deleteBackups(db, project.id, removed);
  if (failure) throw failure;
}

/**
 * An admin deletes one backup: its object on the backend it was written to, then its row, in a
 * transaction holding the row. 404 `backup_not_found` for another project's id; 409
 * `backup_in_use` while it is being written (queued, running, retrying: the run would store its
 * object after) or a restore from it is queued or running (it reads the object). A failed one
 * has no object: only its row goes.
 */
export async function deleteBackup(ctx: AppContext, projectId: string, backupId: string): Promise<BackupView> {
  return ctx.db.admin.transaction().execute(async (tx) => {
    const row = await bq.lockBackup(tx, projectId, backupId, 'update');
    if (!row) throw BackupErrors.backup_not_found();
    if (row.status === 'queued' || row.status === 'running' || row.status === 'retrying') {
      throw BackupErrors.backup_in_use(`This backup is still being written (${row.status}): delete it once it has finished.`);
    }
    if (await bq.hasActiveRestore(tx, backupId)) {
      throw BackupErrors.backup_in_use('A restore from this backup is queued or running: delete it once the restore has finished.');
    }
    const project = await ctx.projects.byId(projectId);
    if (row.object_path && row.provider && project) {
      await removeStoredBackups(ctx, tx, project, [{ id: row.id, created_at: row.created_at, provider: row.provider, object_path: row.object_path }]);
    } else {
      await bq.deleteBackups(tx, projectId, [row.id]);
    }
    return backupView(row);
  });
}

/**
 * A project being deleted (a deletion hook, projects/service.ts): its stored backups' objects go
 * too. Rows cascade with the project, objects do not, and they live outside the project's file
 * folder (`_backups/<projectId>/`, which storage's own hook does not remove).
 *
 * This runs before the project's row is deleted, not after the commit: the project's own bucket
 * (its settings and sealed secret) is only readable while the row exists, and a backup written
 * there must be removed with those credentials. Each object is removed before its row, so if the
 * project's deletion then failed, its remaining backups would still open. A failure is thrown
 * after the rest were removed; deleteProject logs it and deletes the project anyway (the rows
 * cascade; the object left is named in the log). Then the folder is swept on both backends for
 * objects no row names (a temp file of a run cut short). A run still writing when the project
 * goes removes its own object when it finds its row gone (run-service.ts).
 */
export async function removeProjectBackups(ctx: AppContext, projectId: string): Promise<void> {
  const project = await ctx.projects.byId(projectId);
  const failures: unknown[] = [];
  const attempt = (work: () => Promise<unknown> | undefined) => Promise.resolve().then(work).catch((err: unknown) => void failures.push(err));
  if (project) await attempt(async () => removeStoredBackups(ctx, ctx.db.admin, project, await bq.succeededBackups(ctx.db.admin, projectId)));
  await attempt(() => platformDriver(ctx).removePrefix(backupsFolder(projectId)));
  if (project) await attempt(() => backendOfFile(ctx, project, 'external')?.removePrefix(backupsFolder(projectId)));
  if (failures.length) throw failures[0];
}

export function registerBackupHooks(ctx: AppContext): void {
  ctx.hooks.projectDeleting.push((projectId) => removeProjectBackups(ctx, projectId));
}
