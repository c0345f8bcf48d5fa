/**
 * The dashboard's export and import with their progress recorded (operations.ts), so the
 * console can draw a progress bar while they run. The work itself is export-service.ts and
 * import-service.ts. Knows no HTTP.
 */
import type { Readable } from 'node:stream';
import type { Gzip } from 'node:zlib';
import type { AppContext } from '../../context.js';
import { BackupErrors } from './errors.js';
import { exportProject } from './export-service.js';
import { importProject, type ImportOptions, type ImportReport } from './import-service.js';
import type { Target } from './importer.js';
import { failureOf, startOperation } from './operations.js';

export async function trackedExport(ctx: AppContext, project: { id: string; name: string }): Promise<Gzip> {
  const progress = await startOperation(ctx, project.id, 'export', 'writing');
  try {
    const stream = await exportProject(ctx, project, { onProgress: (written, total) => progress.report('writing', Math.min(99, (written / total) * 100)) });
    stream.once('end', () => void progress.done('succeeded', { phase: 'done' }));
    stream.once('close', () => {
      if (!stream.readableEnded) {
        const e = BackupErrors.export_interrupted();
        void progress.done('failed', { phase: 'failed', code: e.code, message: e.message });
      }
    });
    return stream;
  } catch (err) {
    await progress.done('failed', { phase: 'failed', ...failureOf(err) });
    throw err;
  }
}

/** `size`: the upload's Content-Length when it sent one (the percent is of the bytes read). */
export async function trackedImport(ctx: AppContext, target: Target & { operatorId: string }, body: Readable, opts: ImportOptions, size: number | null): Promise<ImportReport> {
  const progress = await startOperation(ctx, target.id, 'import', 'reading', { dryRun: opts.dryRun, newIds: opts.newIds, replace: opts.replace });
  let read = 0;
  const onInput = (n: number) => {
    read += n;
    progress.report('reading', size ? Math.min(95, (read / size) * 95) : 0);
  };
  try {
    const report = await importProject(ctx, target, body, { ...opts, onInput });
    await progress.done('succeeded', { phase: 'done', detail: { dryRun: report.dryRun, newIds: report.newIds, replace: report.replace, counts: report.counts } });
    return report;
  } catch (err) {
    await progress.done('failed', { phase: 'failed', ...failureOf(err) });
    throw err;
  }
}
