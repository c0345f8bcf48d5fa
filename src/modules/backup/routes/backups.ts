/**
 * Scheduled backups and operations' progress (docs/backup.md, docs/dashboard.md):
 * /api/projects/:projectId/backups… (schedule, list, run now, download, restore, delete) and
 * /api/projects/:projectId/operations (progress of backups, restores, imports and exports).
 * The project owner only, as every dashboard route; another operator's project is 404.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf, requireAal2IfEnrolled } from '../../operators/auth.js';
import { envelopeOf } from '../../operators/schemas.js';
import { loadMemberProject } from '../../projects/access.js';
import { getOperation, listOperations } from '../operations.js';
import { deleteBackup } from '../removal.js';
import { describeBackup, listBackups, openBackup, requestRestore } from '../restore-service.js';
import { requestBackup } from '../run-service.js';
import { getSchedule, setSchedule } from '../schedule.js';

const TAGS = ['dashboard: backup'];
const Params = Type.Object({ projectId: Type.String() });
const BackupParams = Type.Object({ projectId: Type.String(), backupId: Type.String() });
const OperationParams = Type.Object({ projectId: Type.String(), operationId: Type.String() });

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
const ErrorView = Nullable(Type.Object({ code: Type.String(), message: Type.String() }));
const Counts = Type.Object({ collections: Type.Integer(), documents: Type.Integer(), users: Type.Integer(), files: Type.Integer() });

const ScheduleView = Type.Object({
  preset: Type.Union([Type.Literal('off'), Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('custom')]),
  cron: Nullable(Type.String({ description: 'the expression that runs, UTC' })),
  timeZone: Type.Literal('UTC'),
  keepDaily: Type.Integer(),
  keepWeekly: Type.Integer(),
  isDefault: Type.Boolean({ description: "true: the plan's default (no schedule of the project's own)" }),
});
const ScheduleBody = Type.Object({
  preset: Type.Union([Type.Literal('off'), Type.Literal('daily'), Type.Literal('weekly'), Type.Literal('custom')], { description: '`off`, `daily`, `weekly` (a minute between 00:00 and 05:59 UTC chosen by the project id), or `custom` with `cron`' }),
  cron: Type.Optional(Type.String({ maxLength: 100, description: 'with `custom`: 5 fields, minute hour day month weekday, UTC' })),
  keepDaily: Type.Optional(Type.Integer({ minimum: 0, maximum: 366, description: 'the newest backup of each of the N most recent days (default 7)' })),
  keepWeekly: Type.Optional(Type.Integer({ minimum: 0, maximum: 520, description: 'then the newest of each of the M most recent weeks (default 4)' })),
}, { additionalProperties: false });
const BackupView = Type.Object({
  id: Type.String(),
  trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')]),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('retrying'), Type.Literal('succeeded'), Type.Literal('failed')]),
  attempts: Type.Integer(),
  maxAttempts: Type.Integer(),
  error: ErrorView,
  size: Nullable(Type.Number({ description: 'bytes stored (encrypted)' })),
  counts: Nullable(Counts),
  storage: Nullable(Type.Union([Type.Literal('internal'), Type.Literal('external')])),
  createdAt: Type.String(),
  finishedAt: Nullable(Type.String()),
});
const OperationView = Type.Object({
  id: Type.String(),
  kind: Type.Union([Type.Literal('backup'), Type.Literal('restore'), Type.Literal('import'), Type.Literal('export')]),
  status: Type.Union([Type.Literal('queued'), Type.Literal('running'), Type.Literal('retrying'), Type.Literal('succeeded'), Type.Literal('failed')]),
  phase: Type.String(),
  percent: Type.Number({ minimum: 0, maximum: 100 }),
  attempts: Type.Integer(),
  backupId: Nullable(Type.String()),
  targetProjectId: Nullable(Type.String()),
  error: ErrorView,
  detail: Nullable(Type.Object({}, { additionalProperties: true })),
  createdAt: Type.String(),
  updatedAt: Type.String(),
  finishedAt: Nullable(Type.String()),
});
const RestoreBody = Type.Object({
  into: Type.Union([Type.Literal('same'), Type.Literal('new')], { description: '`same`: over this project\'s contents; `new`: a new project (a copy with new ids)' }),
  confirm: Type.Optional(Type.String({ maxLength: 200, description: "into `same`: the project's name, exactly (400 `restore_confirmation_mismatch` otherwise)" })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'into `new`: the new project\'s name' })),
}, { additionalProperties: false });
/** The restore's answer: what it does with files, which a backup does not hold (docs/backup.md "Restore"). */
const RESTORE_QUEUED = {
  same: 'Restore queued. A backup holds file records, not file contents: stored files are left as they are, so a file deleted since the backup comes back without its contents.',
  new: "Restore queued. A backup holds file records, not file contents: the new project's files are copied from this project's storage as they are now; files deleted since the backup, and files in this project's own bucket, are not copied.",
} as const;
const OperationsQuery = Type.Object({ active: Type.Optional(Type.Boolean({ description: 'true: only those queued or running' })) });

export default async function backupScheduleRoutes(app: App, ctx: AppContext): Promise<void> {
  const owned = (req: FastifyRequest) => loadMemberProject(ctx, operatorOf(req), (req.params as { projectId: string }).projectId);

  app.get('/api/projects/:projectId/backups/schedule', {
    schema: { tags: TAGS, summary: "The project's backup schedule and retention (its own, or its plan's default)", params: Params, response: { 200: envelopeOf(ScheduleView) } },
  }, async (req) => ok(await getSchedule(ctx, await owned(req), operatorOf(req).plan), 'Backup schedule'));

  app.put('/api/projects/:projectId/backups/schedule', {
    schema: { tags: TAGS, summary: 'Set the backup schedule (preset or cron, UTC) and retention (keep N daily and M weekly)', params: Params, body: ScheduleBody, response: { 200: envelopeOf(ScheduleView) } },
  }, async (req) => ok(await setSchedule(ctx, await owned(req), operatorOf(req).plan, req.body), 'Backup schedule saved'));

  app.get('/api/projects/:projectId/backups', {
    schema: { tags: TAGS, summary: "The project's backups, newest first (stored ones and attempts), with size, counts and status", params: Params, response: { 200: envelopeOf(Type.Array(BackupView)) } },
  }, async (req) => ok(await listBackups(ctx, (await owned(req)).id), 'Backups'));

  app.post('/api/projects/:projectId/backups', {
    schema: {
      tags: TAGS, summary: 'Back the project up now (a job of the workers; 409 `backup_in_progress` while one is queued or running)', params: Params,
      response: { 202: envelopeOf(Type.Object({ backupId: Type.String(), operationId: Type.String() })) },
    },
  }, async (req, reply) => reply.code(202).send(ok(await requestBackup(ctx, (await owned(req)).id), 'Backup queued')));

  app.get('/api/projects/:projectId/backups/:backupId', {
    schema: {
      tags: TAGS, summary: 'One backup, and what a restore over the project would replace (its name and current counts)', params: BackupParams,
      response: { 200: envelopeOf(Type.Intersect([BackupView, Type.Object({ replaces: Type.Object({ project: Type.Object({ id: Type.String(), name: Type.String() }), counts: Counts }) })])) },
    },
  }, async (req) => ok(await describeBackup(ctx, await owned(req), req.params.backupId), 'Backup'));

  app.get('/api/projects/:projectId/backups/:backupId/download', {
    schema: { tags: TAGS, summary: 'The backup, decrypted: the project archive (gzip NDJSON) as an export gives it', params: BackupParams },
  }, async (req, reply) => {
    const project = await owned(req);
    requireAal2IfEnrolled(operatorOf(req));
    const { stream, row } = await openBackup(ctx, project.id, req.params.backupId);
    return reply
      .type('application/gzip')
      .header('content-disposition', `attachment; filename="plinth-${project.id}-${row.created_at.toISOString().slice(0, 16).replace(':', '')}.ndjson.gz"`)
      .header('cache-control', 'no-store')
      .send(stream);
  });

  app.post('/api/projects/:projectId/backups/:backupId/restore', {
    schema: {
      tags: TAGS,
      summary: 'Restore the backup over this project (`into: same`, with `confirm` = the project name) or into a new project (`into: new`); runs as a job with progress',
      description: 'A backup holds file records, not file contents (docs/backup.md "Restore"). Into the same project, stored files are left as they are: one deleted since the backup comes back without its contents. ' +
        "Into a new project, the objects are copied from this project's storage as they are now: those gone since are counted in the operation's `detail.files.missing`; those in this project's own bucket are not copied.",
      params: BackupParams, body: RestoreBody, response: { 202: envelopeOf(OperationView) },
    },
  }, async (req, reply) => {
    const operator = operatorOf(req);
    const project = await owned(req);
    // Replacing a project's contents is as destructive as deleting it: the same second factor.
    requireAal2IfEnrolled(operator);
    return reply.code(202).send(ok(await requestRestore(ctx, operator, project, req.params.backupId, req.body), RESTORE_QUEUED[req.body.into]));
  });

  app.delete('/api/projects/:projectId/backups/:backupId', {
    schema: {
      tags: TAGS,
      summary: 'Delete a stored backup: its object in the storage it was written to, then its record',
      description: '404 `backup_not_found` for an id of another project; 409 `backup_in_use` while the backup is queued, running or retrying, or a restore from it is queued or running. A failed backup has no object: only its record goes.',
      params: BackupParams,
      response: { 200: envelopeOf(Type.Object({ deleted: Type.Literal(true), backup: BackupView })) },
    },
  }, async (req) => {
    const project = await owned(req);
    // Deleting what a restore would come from: the same second factor as the restore.
    requireAal2IfEnrolled(operatorOf(req));
    return ok({ deleted: true as const, backup: await deleteBackup(ctx, project.id, req.params.backupId) }, 'Backup deleted');
  });

  app.get('/api/projects/:projectId/operations', {
    schema: { tags: TAGS, summary: 'Backups, restores, imports and exports of the project with their progress (percent and phase), newest first', params: Params, querystring: OperationsQuery, response: { 200: envelopeOf(Type.Array(OperationView)) } },
  }, async (req) => ok(await listOperations(ctx, (await owned(req)).id, req.query.active === true), 'Operations'));

  app.get('/api/projects/:projectId/operations/:operationId', {
    schema: { tags: TAGS, summary: 'One operation and its progress', params: OperationParams, response: { 200: envelopeOf(OperationView) } },
  }, async (req) => ok(await getOperation(ctx, (await owned(req)).id, req.params.operationId), 'Operation'));
}
