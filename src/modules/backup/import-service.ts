/**
 * Project import: an archive (archive.ts) into a new or empty project, in ONE owner
 * transaction: collections (with their partitions and indexes, as a create does), documents
 * with their ids, owners and times, end users with their ids and password hashes, file
 * records under the project's own folder, and the quota charged under the plan's limits.
 * Anything wrong rolls everything back. A dry run does all of it and rolls back, reporting what
 * would be imported and every conflict it can find. Knows no HTTP.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { sqlState } from '../../db/errors.js';
import type { Database } from '../../database.js';
import { AppError } from '../../lib/errors.js';
import { METRICS, reserve } from '../../lib/quota-queries.js';
import { announceChange } from '../collections/cache.js';
import { createCollectionIn } from '../collections/service.js';
import { DataErrors } from '../data/errors.js';
import { planOf, type PlanName } from '../plans/plans.js';
import { StorageErrors } from '../storage/errors.js';
import type { ArchiveRecord, Counts, DocumentRecord, FileRecord, UserRecord } from './archive.js';
import { BackupErrors } from './errors.js';
import * as q from './queries.js';

export interface ImportReport {
  dryRun: boolean;
  counts: Counts;
  /** Why the archive cannot go into this project (empty when it can). At most MAX_CONFLICTS. */
  conflicts: string[];
  /** File records carry no bytes: copy the objects from the source's folder to this one. */
  files: { sourceFolder: string; targetFolder: string } | null;
}

const MAX_CONFLICTS = 50;
const BAD_VALUE = new Set(['22P02', '22007', '22008', '22009', '22003', '22021', '22P05', '23502', '23514']);

interface Target {
  id: string;
  plan: PlanName;
}

/** The rollback of a dry run, carrying its report out of the transaction. */
class DryRunDone extends Error {
  constructor(readonly report: ImportReport) {
    super('dry run');
  }
}

class Importer {
  readonly counts: Counts = { collections: 0, documents: 0, users: 0, files: 0 };
  readonly conflicts: string[] = [];
  private readonly collectionIds = new Map<string, string>();
  private docs = new Map<string, DocumentRecord[]>();
  private users: UserRecord[] = [];
  private files: FileRecord[] = [];
  private pendingLines: [number, number] = [0, 0];
  dbBytes = 0;
  fileBytes = 0;
  sourceProject: string | null = null;
  ended: Counts | null = null;

  constructor(private readonly ctx: AppContext, private readonly tx: Kysely<Database>, private readonly target: Target) {}

  conflict(message: string) {
    if (this.conflicts.length < MAX_CONFLICTS) this.conflicts.push(message);
  }

  async add(record: ArchiveRecord, line: number): Promise<void> {
    if (line > 1 && record.type === 'header') throw BackupErrors.invalid_archive(`Line ${line}: a second header.`);
    if (line === 1 && record.type !== 'header') throw BackupErrors.invalid_archive('Line 1: the archive must start with its header.');
    if (this.ended) throw BackupErrors.invalid_archive(`Line ${line}: a record after the end record.`);
    this.pendingLines = [this.pendingLines[0] || line, line];
    switch (record.type) {
      case 'header':
        this.sourceProject = record.project?.id ?? null;
        return;
      case 'collection':
        return this.collection(record, line);
      case 'document':
        return this.document(record, line);
      case 'user':
        this.users.push(record);
        if (this.users.length >= q.PAGE) await this.flushUsers();
        return;
      case 'file':
        this.files.push(record);
        if (this.files.length >= q.PAGE) await this.flushFiles();
        return;
      case 'end':
        await this.flushAll();
        this.ended = record.counts;
    }
  }

  private async collection(r: ArchiveRecord & { type: 'collection' }, line: number) {
    try {
      const created = await createCollectionIn(this.tx, this.ctx.clock.now(), this.target.id, this.target.plan, { name: r.name, fields: r.fields, rls: r.rls, indexes: r.indexes, searchLanguage: r.searchLanguage, realtime: r.realtime === true });
      this.collectionIds.set(r.name, created.id);
      this.counts.collections++;
    } catch (err) {
      if (err instanceof AppError) throw err.withMessage(`Line ${line} (collection ${r.name}): ${err.message}`);
      throw err;
    }
  }

  private async document(r: DocumentRecord, line: number) {
    if (!this.collectionIds.has(r.collection)) throw BackupErrors.invalid_archive(`Line ${line}: document of collection '${r.collection}', which the archive does not declare before it.`);
    const list = this.docs.get(r.collection) ?? [];
    list.push(r);
    this.docs.set(r.collection, list);
    if (list.length >= q.PAGE) await this.flushDocs(r.collection, list);
  }

  /** Runs one batch insert; a database refusal names the lines it came from. */
  private async guarded(what: string, fn: () => Promise<void>) {
    const [from, to] = this.pendingLines;
    const where = from === to ? `Line ${from}` : `Lines ${from}-${to}`;
    try {
      await fn();
    } catch (err) {
      const code = sqlState(err);
      if (code === '23505') {
        this.conflict(`${where}: ${what}: a value that must be unique is already taken (${(err as { constraint?: string }).constraint ?? 'unique index'}).`);
        throw BackupErrors.import_conflicts(undefined, { conflicts: this.conflicts });
      }
      if (code && BAD_VALUE.has(code)) throw BackupErrors.invalid_archive(`${where}: ${what}: a value the database refuses (${(err as Error).message}).`);
      throw err;
    }
  }

  private async flushDocs(name: string, list: DocumentRecord[]) {
    this.docs.set(name, []);
    await this.guarded(`documents of '${name}'`, async () => {
      this.dbBytes += await q.insertDocuments(this.tx, this.target.id, this.collectionIds.get(name)!, list);
    });
    this.counts.documents += list.length;
    this.pendingLines = [0, 0];
  }

  private async flushUsers() {
    const batch = this.users;
    this.users = [];
    const taken = new Set(await q.takenUserIds(this.tx, batch.map((u) => u.id)));
    for (const id of taken) this.conflict(`User ${id}: this id is taken on this server (is the source project still here? Delete it first, or import on another server).`);
    await this.guarded('users', () => q.insertUsers(this.tx, this.target.id, batch.filter((u) => !taken.has(u.id))));
    this.counts.users += batch.length;
    this.pendingLines = [0, 0];
  }

  private async flushFiles() {
    const batch = this.files;
    this.files = [];
    await this.guarded('files', async () => {
      this.fileBytes += await q.insertFiles(this.tx, this.target.id, batch);
    });
    this.counts.files += batch.length;
    this.pendingLines = [0, 0];
  }

  async flushAll() {
    for (const [name, list] of this.docs) if (list.length) await this.flushDocs(name, list);
    if (this.users.length) await this.flushUsers();
    if (this.files.length) await this.flushFiles();
  }

  /** The archive is whole (its end record matches what was read) and the plan allows it. */
  async finish() {
    if (!this.ended) throw BackupErrors.invalid_archive('The archive has no end record: it was cut short.');
    for (const k of ['collections', 'documents', 'users', 'files'] as const) {
      if (this.ended[k] !== this.counts[k]) throw BackupErrors.invalid_archive(`The end record counts ${String(this.ended[k])} ${k}, the archive holds ${this.counts[k]}.`);
    }
    const plan = planOf(this.target.plan);
    const db = { subjectId: this.target.id, metric: METRICS.dbBytes };
    const storage = { subjectId: this.target.id, metric: METRICS.storageBytes };
    if ((await reserve(this.tx, db, this.dbBytes, plan.databaseBytes)) === null) throw DataErrors.database_limit(`The documents need ${this.dbBytes} bytes, over the plan's database limit.`);
    if ((await reserve(this.tx, storage, this.fileBytes, plan.storageBytes)) === null) throw StorageErrors.storage_limit_exceeded(`The files need ${this.fileBytes} bytes, over the plan's storage limit.`);
  }
}

export async function importProject(
  ctx: AppContext, target: Target, records: AsyncIterable<{ record: ArchiveRecord; line: number }>, dryRun: boolean,
): Promise<ImportReport> {
  try {
    const report = await ctx.db.admin.transaction().execute(async (tx) => {
      const imp = new Importer(ctx, tx, target);
      await q.lockProject(tx, target.id);
      const has = await q.contents(tx, target.id);
      if (has.collections || has.users || has.files) {
        imp.conflict(`The project is not empty (${has.collections} collections, ${has.users} users, ${has.files} files): import into a new or empty project.`);
        if (!dryRun) throw BackupErrors.import_conflicts(undefined, { conflicts: imp.conflicts });
      }
      for await (const { record, line } of records) await imp.add(record, line);
      await imp.finish();
      const result: ImportReport = {
        dryRun,
        counts: imp.counts,
        conflicts: imp.conflicts,
        files: imp.counts.files ? { sourceFolder: `${imp.sourceProject ?? '<source project id>'}/`, targetFolder: `${target.id}/` } : null,
      };
      if (dryRun) throw new DryRunDone(result);
      if (imp.conflicts.length) throw BackupErrors.import_conflicts(undefined, { conflicts: imp.conflicts });
      return result;
    });
    await announceChange(ctx, target.id);
    return report;
  } catch (err) {
    if (err instanceof DryRunDone) return err.report;
    throw err;
  }
}
