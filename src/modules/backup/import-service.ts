/**
 * Project import: an archive (archive.ts) into a new or empty project, in ONE owner
 * transaction (importer.ts): collections (with their partitions, indexes and rules, as a
 * create does), documents with their ids, owners, times and hidden fields, end users with
 * their ids, password hashes, second factors and provider identities, file records under the
 * project's own folder, the project's mail texts, webhook endpoints, functions (every version,
 * the active one as it was) and function secrets (still encrypted) and plain settings, and the quota charged
 * under the plan's limits. Anything wrong rolls everything back. A dry run does all of it and rolls back,
 * reporting what would be imported and every conflict it can find. `newIds` makes a copy with
 * new ids (new-ids.ts), for a second project on the same server; `replace` restores a project
 * over its own contents (emptied first, in the same transaction: a failed restore leaves the
 * project as it was).
 *
 * The work is bounded (issue 32 item 3): the archive is read with caps on its decompressed
 * bytes (IMPORT_MAX_BYTES), its lines (IMPORT_MAX_LINES), each line, its time (IMPORT_TIMEOUT)
 * and the upload's silences; the plan's database and storage limits end it at the first batch
 * beyond them; one import per operator at a time (429); the client leaving stops it, and an
 * import whose client left or whose time ran out after the archive was read rolls back too
 * (stillWanted, checked before the commit). Knows no HTTP.
 */
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import { METRICS, refund } from '../../lib/quota-queries.js';
import { announceChange } from '../collections/cache.js';
import { dropPartitionsNow } from '../collections/cleanup.js';
import { removeAllCollectionsIn } from '../collections/service.js';
import { readArchive, type Counts, type ReadLimits } from './archive.js';
import { BackupErrors } from './errors.js';
import { Importer, type Target } from './importer.js';
import { afterBulkWrite, MIN_BULK_ROWS } from '../data/fresh-stats.js';
import { NewIds } from './new-ids.js';
import * as q from './queries.js';

export interface ImportReport {
  dryRun: boolean;
  newIds: boolean;
  replace: boolean;
  counts: Counts;
  /** Why the archive cannot go into this project (empty when it can). At most 50. */
  conflicts: string[];
  /** What did not come along, and what to do about it (provider secrets to enter again, ...). */
  notes: string[];
  /** File records carry no bytes: copy the objects from the source's folder to this one. */
  files: { sourceFolder: string; targetFolder: string } | null;
}

export interface ImportOptions {
  dryRun: boolean;
  newIds: boolean;
  /** Restore over the project's own contents (removed in the same transaction first). */
  replace: boolean;
  /** Aborted when the client goes away: the import stops and rolls back. */
  signal: AbortSignal;
  /** Told the archive's (compressed) bytes as they are read: the progress of operations.ts. */
  onInput?: (bytes: number) => void;
}

const MB = 1024 * 1024;
/** The longest line read: a document is at most BODY_LIMIT, and may have grown by updates. */
const MIN_LINE_BYTES = 8 * MB;
/** An upload silent this long is stopped: it would hold its transaction and locks. */
const STALL_MS = 60_000;

/**
 * What one import may read. No budget per plan here: an archive's size says little about what
 * it stores (a document line carries ~200 bytes of names and times), so the plan's limits are
 * applied to what is inserted instead, batch by batch (importer.ts).
 */
export function importLimits(ctx: AppContext, signal: AbortSignal): ReadLimits {
  return {
    maxBytes: ctx.config.importMaxBytes,
    maxLines: ctx.config.importMaxLines,
    maxLineBytes: Math.max(MIN_LINE_BYTES, 2 * ctx.config.bodyLimit + 64 * 1024),
    signal,
    stallMs: STALL_MS,
    maxMs: ctx.config.importTimeoutSeconds * 1000,
  };
}

/** The rollback of a dry run, carrying its report out of the transaction. */
class DryRunDone extends Error {
  constructor(readonly report: ImportReport) {
    super('dry run');
  }
}

/**
 * Throws when the import is no longer wanted: its client left or IMPORT_TIMEOUT passed. Checked
 * once the archive is read (the reader stops on both while it reads) and again just before the
 * commit, so an import whose client is gone, or that ran out of time in its last statements
 * (the end checks, the rewrite of ids, the quota), rolls back instead of committing.
 */
function stillWanted(limits: ReadLimits, deadline: number): void {
  if (limits.signal.aborted) throw BackupErrors.import_aborted();
  if (Date.now() > deadline) throw BackupErrors.import_timeout(`The import took longer than ${Math.round(limits.maxMs / 1000)} s (IMPORT_TIMEOUT): it was stopped, nothing was written.`);
}

/**
 * Empties the project inside the import's transaction: collections (partitions emptied, queued
 * for dropping), end users (their sessions, factors and identities go with them: everyone signs
 * in again), file records, uploads in flight, its own mail texts; the quota refunded. The file
 * objects are left in storage: the archive's files keep their names in the same folder.
 * Settings are not removed: the archive's are merged over them.
 */
async function replaceContents(ctx: AppContext, tx: Kysely<Database>, projectId: string): Promise<void> {
  await removeAllCollectionsIn(ctx, tx, projectId);
  const fileBytes = await q.deleteProjectContents(tx, projectId);
  if (fileBytes > 0) await refund(tx, { subjectId: projectId, metric: METRICS.storageBytes }, fileBytes);
}

export async function importProject(ctx: AppContext, target: Target & { operatorId: string }, body: Readable, opts: ImportOptions): Promise<ImportReport> {
  const { dryRun } = opts;
  const limits = { ...importLimits(ctx, opts.signal), onInput: opts.onInput };
  const deadline = Date.now() + limits.maxMs;
  let created: string[] = [];
  try {
    const report = await ctx.db.admin.transaction().execute(async (tx) => {
      if (!(await q.tryLockOperatorImport(tx, target.operatorId))) throw BackupErrors.import_in_progress();
      const imp = new Importer(ctx, tx, target, opts.newIds ? new NewIds() : null);
      await q.lockProject(tx, target.id);
      await imp.start();
      if (opts.replace) await replaceContents(ctx, tx, target.id);
      const has = await q.contents(tx, target.id);
      if (has.collections || has.users || has.files || has.functions || has.functionSecrets) {
        const functions = has.functions || has.functionSecrets ? `, ${has.functions} functions, ${has.functionSecrets} function secrets` : '';
        imp.conflict(`The project is not empty (${has.collections} collections, ${has.users} users, ${has.files} files${functions}): import into a new or empty project.`);
        if (!dryRun) throw BackupErrors.import_conflicts(undefined, { conflicts: imp.conflicts });
      }
      for await (const { record, line, chars } of readArchive(body, limits)) await imp.add(record, line, chars);
      stillWanted(limits, deadline);
      await imp.finish();
      const result: ImportReport = {
        dryRun,
        newIds: opts.newIds,
        replace: opts.replace,
        counts: imp.counts,
        conflicts: imp.conflicts,
        notes: imp.notes,
        files: imp.counts.files ? { sourceFolder: `${imp.sourceProject ?? '<source project id>'}/`, targetFolder: `${target.id}/` } : null,
      };
      if (dryRun) throw new DryRunDone(result);
      if (imp.conflicts.length) throw BackupErrors.import_conflicts(undefined, { conflicts: imp.conflicts });
      stillWanted(limits, deadline);
      created = imp.createdCollections;
      return result;
    });
    // Planner statistics for what was just loaded, not at autovacuum's next round (docs/data.md).
    for (const collectionId of created) afterBulkWrite(ctx, collectionId, MIN_BULK_ROWS);
    // Collections, functions and function secrets changed: every node drops its cached copy
    // (the collection cache and the function registry both listen for it).
    await announceChange(ctx, target.id);
    if (opts.replace) await dropPartitionsNow(ctx);
    // Settings may have changed: every node drops its cached project.
    await ctx.bus.publish({ type: 'project_changed', id: target.id });
    return report;
  } catch (err) {
    if (err instanceof DryRunDone) return err.report;
    throw err;
  }
}
