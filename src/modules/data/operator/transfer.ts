/**
 * GET …/data/:collectionName/export/:format (json | ndjson, streamed, the list filters) and
 * POST …/data/:collectionName/import (JSON array, NDJSON or CSV by Content-Type).
 */
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { Errors } from '../../../lib/errors.js';
import type { App } from '../../../app.js';
import { parseListQuery } from '../query.js';
import { rawQuery } from '../target.js';
import { exportStream } from './export.js';
import { importRows, parseImport, type ImportFormat } from './import.js';
import { CollectionParams, operatorTarget, TAGS } from './target.js';

const ExportParams = Type.Object({
  projectId: Type.String(),
  collectionName: Type.String({ maxLength: 200 }),
  format: Type.Union([Type.Literal('json'), Type.Literal('ndjson')]),
});

const CONTENT_TYPES: Record<string, ImportFormat> = {
  'application/json': 'json',
  'application/x-ndjson': 'ndjson',
  'application/ndjson': 'ndjson',
  'text/csv': 'csv',
};

function importFormat(contentType: string | undefined): ImportFormat {
  const base = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  const format = Object.hasOwn(CONTENT_TYPES, base) ? CONTENT_TYPES[base] : undefined;
  if (!format) throw Errors.unsupported_media_type('Send application/json (an array), application/x-ndjson or text/csv.');
  return format;
}

/** A file name safe in a Content-Disposition header (collection names are [A-Za-z0-9_-]). */
const fileName = (name: string, ext: string) => `${name.replace(/[^A-Za-z0-9_-]/g, '_')}.${ext}`;

export default async function operatorTransferRoutes(app: App, ctx: AppContext): Promise<void> {
  const base = '/api/projects/:projectId/data/:collectionName';

  app.get(
    `${base}/export/:format`,
    {
      schema: { tags: TAGS, summary: 'Export the documents matching the list filters (streamed; newest first)', params: ExportParams },
    },
    async (req, reply) => {
      const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
      const { format } = req.params;
      const stream = await exportStream(ctx, t.col, t.access, parseListQuery(rawQuery(req)), format);
      stream.on('error', (err) => req.log.error({ err }, 'export failed mid-stream'));
      return reply
        .type(format === 'json' ? 'application/json; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="${fileName(t.col.name, format)}"`)
        .header('cache-control', 'no-store')
        .send(stream);
    },
  );

  // NDJSON and CSV arrive as text; the parsers live in this plugin's scope only.
  await app.register(async (plugin) => {
    const scoped = plugin.withTypeProvider<TypeBoxTypeProvider>();
    scoped.addContentTypeParser(['text/csv', 'application/x-ndjson', 'application/ndjson'], { parseAs: 'string' }, (_req, body, done) => done(null, body));
    scoped.post(
      `${base}/import`,
      {
        schema: {
          tags: TAGS,
          summary: 'Import documents from a JSON array, NDJSON or CSV body; a message per refused row',
          params: CollectionParams,
          querystring: Type.Object({
            hooks: Type.Optional(Type.Boolean({ default: true, description: "false: the collection's before-hooks do not run for these rows (docs/functions.md)" })),
          }),
          body: Type.Unknown({ description: 'application/json (array), application/x-ndjson or text/csv (header row)' }),
          response: {
            200: Type.Object({
              success: Type.Boolean(),
              message: Type.String(),
              data: Type.Object({
                total: Type.Integer(),
                inserted: Type.Integer(),
                failed: Type.Integer(),
                errors: Type.Array(Type.Object({ row: Type.Integer(), message: Type.String() })),
              }),
            }),
          },
        },
      },
      async (req) => {
        const t = await operatorTarget(ctx, req, req.params.projectId, req.params.collectionName);
        const rows = parseImport(importFormat(req.headers['content-type']), req.body, t.col.byKey);
        const result = await importRows(ctx, req.query.hooks === false ? { ...t, access: { ...t.access, skipHooks: true } } : t, rows);
        return ok(result, `${result.inserted} of ${result.total} rows imported`);
      },
    );
  });
}
