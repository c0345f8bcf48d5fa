/**
 * GET /api/projects/:projectId/export (the project's archive, streamed) and
 * POST /api/projects/:projectId/import (an archive into this new or empty project; ?dryRun=true
 * reports without writing). The project owner only, as every dashboard route.
 */
import type { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { Errors } from '../../../lib/errors.js';
import { operatorOf, requireAal2IfEnrolled } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { trackedExport, trackedImport } from '../tracked.js';

const TAGS = ['dashboard: backup'];
const Params = Type.Object({ projectId: Type.String() });
const ImportQuery = Type.Object({
  dryRun: Type.Optional(Type.Boolean({ description: 'true: check and report, write nothing' })),
  newIds: Type.Optional(Type.Boolean({ description: 'true: a copy with new document and user ids, owners and references rewritten (docs/backup.md)' })),
  replace: Type.Optional(Type.Boolean({ description: 'true: restore over this project\'s own contents (collections, documents, end users, file records, mail texts are removed first, in the same transaction)' })),
});

export default async function backupRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/export',
    {
      schema: {
        tags: TAGS,
        summary: 'Export the project (collections with rules, documents with hidden fields, end users with password hashes, second factors and provider identities, file records, mail texts, plain settings) as a gzip NDJSON archive',
        description: 'One consistent snapshot, streamed. No API keys, JWT secret, provider keys or client secrets, bucket credentials, sessions or one-time codes. File bytes are not included (docs/backup.md).',
        params: Params,
      },
    },
    async (req, reply) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      requireAal2IfEnrolled(operatorOf(req));
      const stream = await trackedExport(ctx, { id: project.id, name: project.name });
      const day = ctx.clock.now().toISOString().slice(0, 10);
      return reply
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="plinth-${project.id}-${day}.ndjson.gz"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );

  await app.register(async (scope) => {
    scope.addContentTypeParser('application/gzip', (_req, payload, done) => done(null, payload));
    scope.post<{ Params: { projectId: string }; Querystring: { dryRun?: boolean; newIds?: boolean; replace?: boolean }; Body: Readable }>(
      '/api/projects/:projectId/import',
      {
        schema: {
          tags: TAGS,
          summary: 'Import an export archive into this new or empty project (same ids, or new ones with newIds=true), or over its own contents (replace=true); dryRun=true reports without writing',
          description: 'Body: the archive as `application/gzip`. All or nothing, in one transaction. 409 `import_conflicts` lists what stands in the way (a non-empty project, user ids taken on this server, duplicate unique values). ' +
            'Bounded: 413 beyond IMPORT_MAX_BYTES or IMPORT_MAX_LINES, 403 beyond the plan\'s limits, 429 while another import of the same operator runs; a client that leaves stops it (docs/backup.md).',
          params: Params,
          querystring: ImportQuery,
        },
      },
      async (req, reply) => {
        if (typeof (req.body as Partial<Readable> | undefined)?.pipe !== 'function') throw Errors.unsupported_media_type('Send the archive as application/gzip.');
        const operator = operatorOf(req);
        const project = await loadMemberProject(ctx, operator, req.params.projectId);
        // Replacing a project's contents is as destructive as deleting it: the same second factor.
        if (req.query.replace === true) requireAal2IfEnrolled(operator);
        // The connection closing before the answer is sent: the client left, stop the work.
        const gone = new AbortController();
        const onClose = () => { if (!reply.raw.writableFinished) gone.abort(); };
        reply.raw.once('close', onClose);
        try {
          const size = Number(req.headers['content-length']);
          const report = await trackedImport(ctx, { id: project.id, plan: operator.plan, operatorId: operator.id }, req.body, {
            dryRun: req.query.dryRun === true, newIds: req.query.newIds === true, replace: req.query.replace === true, signal: gone.signal,
          }, Number.isFinite(size) && size > 0 ? size : null);
          return ok(report, report.dryRun ? 'Dry run: nothing was written.' : 'Project imported.');
        } finally {
          reply.raw.off('close', onClose);
        }
      },
    );
  });
}
