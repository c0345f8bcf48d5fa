/**
 * Progress of long work on a project (docs/backup.md "Progress"): backups and restores (jobs),
 * imports and exports (requests). Each is a row of project_operations with its status, phase
 * and percent, written at most every PROGRESS_MS (or on a change of phase) so a large archive
 * does not write a row per record; the console polls GET /api/projects/:id/operations and draws
 * a progress bar. Knows no HTTP.
 */
import type { AppContext } from '../../context.js';
import { AppError } from '../../lib/errors.js';
import { objectId } from '../../lib/ids.js';
import { BackupErrors } from './errors.js';
import * as bq from './backup-queries.js';

const PROGRESS_MS = 500;
/** An import or export not heard of for this long ran on a process that stopped. */
const ABANDONED_MS = 10 * 60_000;

export class Progress {
  private last = 0;
  private lastPhase = '';
  private lastPercent = -1;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly ctx: AppContext, readonly id: string) {}

  /** Records the phase and percent (0–100), throttled; never throws (a progress row is not the work). */
  report(phase: string, percent: number, opts: { force?: boolean; status?: bq.OperationStatus; attempts?: number } = {}): void {
    const now = Date.now();
    const p = Math.max(0, Math.min(100, Math.round(percent * 10) / 10));
    if (!opts.force && phase === this.lastPhase && (now - this.last < PROGRESS_MS || p === this.lastPercent)) return;
    this.last = now;
    this.lastPhase = phase;
    this.lastPercent = p;
    const at = this.ctx.clock.now();
    this.chain = this.chain
      .then(() => bq.operationProgress(this.ctx.db.admin, this.id, { phase, percent: p, status: opts.status, attempts: opts.attempts, now: at }))
      .catch((err) => this.ctx.log.warn({ err, operationId: this.id }, 'operation progress not recorded'));
  }

  async done(status: 'succeeded' | 'failed' | 'retrying', d: { phase: string; percent?: number; code?: string; message?: string; detail?: unknown } ): Promise<void> {
    await this.chain;
    await bq.operationDone(this.ctx.db.admin, this.id, {
      status, phase: d.phase, percent: d.percent ?? (status === 'succeeded' ? 100 : this.lastPercent < 0 ? 0 : this.lastPercent),
      code: d.code ?? null, message: d.message ?? null, detail: d.detail, now: this.ctx.clock.now(),
    }).catch((err) => this.ctx.log.warn({ err, operationId: this.id }, 'operation end not recorded'));
  }
}

/** A new operation, `running` from now (imports and exports: the request does the work). */
export async function startOperation(ctx: AppContext, projectId: string, kind: 'import' | 'export', phase: string, detail?: unknown): Promise<Progress> {
  const id = objectId();
  await bq.insertOperation(ctx.db.admin, { id, projectId, kind, status: 'running', phase, detail, now: ctx.clock.now() });
  return new Progress(ctx, id);
}

/** The stable code and a message of a failure, for a row a user reads (no internals). */
export function failureOf(err: unknown, fallback: 'backup_failed' | 'restore_failed' = 'backup_failed'): { code: string; message: string } {
  if (err instanceof AppError) return { code: err.code, message: err.message };
  const e = BackupErrors[fallback]();
  return { code: e.code, message: e.message };
}

export interface OperationView {
  id: string;
  kind: bq.OperationKind;
  status: bq.OperationStatus;
  phase: string;
  percent: number;
  attempts: number;
  backupId: string | null;
  targetProjectId: string | null;
  error: { code: string; message: string } | null;
  detail: Record<string, unknown> | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export function operationView(r: bq.OperationRow): OperationView {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    phase: r.phase,
    percent: Number(r.percent),
    attempts: r.attempts,
    backupId: r.backup_id,
    targetProjectId: r.target_project_id,
    error: r.error_code ? { code: r.error_code, message: r.error_message ?? '' } : null,
    detail: r.detail,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    finishedAt: r.finished_at ? r.finished_at.toISOString() : null,
  };
}

export async function listOperations(ctx: AppContext, projectId: string, activeOnly: boolean): Promise<OperationView[]> {
  const now = ctx.clock.now();
  await bq.failStaleOperations(ctx.db.admin, projectId, new Date(now.getTime() - ABANDONED_MS), now);
  return (await bq.listOperations(ctx.db.admin, projectId, activeOnly, 50)).map(operationView);
}

export async function getOperation(ctx: AppContext, projectId: string, id: string): Promise<OperationView> {
  const row = await bq.operationOf(ctx.db.admin, projectId, id);
  if (!row) throw BackupErrors.operation_not_found();
  return operationView(row);
}
