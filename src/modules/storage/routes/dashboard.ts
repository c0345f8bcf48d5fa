/**
 * Dashboard storage routes (operator session, project owner only):
 * GET /api/projects/:projectId/files, GET and PATCH /api/projects/:projectId/storage.
 */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { listFiles, setBucket, setFileSettings, storageOverview, type BucketInput } from '../dashboard-service.js';
import { StorageErrors } from '../errors.js';
import { Envelope, errorReplies } from './schemas.js';

const Params = Type.Object({ projectId: Type.String() });
const Paging = Type.Object({
  // Bounded so the offset stays a valid bigint (a huge page was a 500).
  page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
});
const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

const FileItem = Type.Object({
  path: Type.String(),
  url: Nullable(Type.String()),
  size: Type.Integer(),
  contentType: Type.String(),
  provider: Type.String(),
  ownerId: Nullable(Type.String()),
  private: Type.Boolean(),
  createdAt: Type.String(),
  confirmedAt: Nullable(Type.String()),
});
const FilesPage = Type.Object({ items: Type.Array(FileItem), total: Type.Integer(), page: Type.Integer(), limit: Type.Integer() });

const Bucket = Type.Object({
  bucket: Type.String({ minLength: 3, maxLength: 63 }),
  region: Type.String({ minLength: 1, maxLength: 64 }),
  endpoint: Type.Optional(Type.String({ maxLength: 512 })),
  accessKeyId: Type.String({ minLength: 1, maxLength: 256 }),
  secretAccessKey: Type.String({ minLength: 1, maxLength: 512 }),
  forcePathStyle: Type.Optional(Type.Boolean()),
  publicUrl: Type.Optional(Type.String({ maxLength: 512 })),
});
const Disable = Type.Object({ enabled: Type.Literal(false) });

const FileSettingsView = Type.Object({
  private: Type.Boolean({ description: 'new files are private unless set otherwise' }),
  allowedTypes: Type.Union([Type.Array(Type.String()), Type.Null()], { description: 'media types or families (image/*) accepted, checked against the bytes; null: any' }),
  maxFileBytes: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], { description: "largest file, below the plan's; null: the plan's" }),
  signedTransformsOnly: Type.Boolean({ description: 'image transformations only on signed URLs' }),
});
const FileSettingsBody = Type.Object({
  private: Type.Optional(Type.Boolean()),
  allowedTypes: Type.Optional(Type.Union([Type.Array(Type.String({ minLength: 3, maxLength: 100 }), { maxItems: 50 }), Type.Null()])),
  maxFileBytes: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  signedTransformsOnly: Type.Optional(Type.Boolean()),
});

const Overview = Type.Object({
  used: Type.Number(),
  limit: Type.Number(),
  maxFileBytes: Type.Number(),
  fileCount: Type.Integer(),
  driver: Type.String(),
  bucket: Type.Union([
    Type.Object({
      bucket: Type.String(),
      region: Type.String(),
      endpoint: Type.Optional(Type.String()),
      accessKeyId: Type.String(),
      forcePathStyle: Type.Optional(Type.Boolean()),
      publicUrl: Type.Optional(Type.String()),
      hasSecretAccessKey: Type.Boolean(),
    }),
    Type.Null(),
  ]),
  files: FileSettingsView,
});

export default async function storageDashboardRoutes(app: App, ctx: AppContext): Promise<void> {
  const common = { tags: ['storage'], params: Params };
  app.get(
    '/api/projects/:projectId/files',
    {
      schema: { ...common, summary: "List a project's files, newest first", querystring: Paging, response: { 200: Envelope(FilesPage), ...errorReplies(400, 401, 404) } },
    },
    async (req) => ok(await listFiles(ctx, operatorOf(req), req.params.projectId, req.query.page, req.query.limit)),
  );
  app.get(
    '/api/projects/:projectId/storage',
    { schema: { ...common, summary: 'Storage usage, limit and bucket settings', response: { 200: Envelope(Overview), ...errorReplies(401, 404) } } },
    async (req) => ok(await storageOverview(ctx, operatorOf(req), req.params.projectId)),
  );
  app.patch(
    '/api/projects/:projectId/storage',
    {
      attachValidation: true,
      schema: {
        ...common,
        summary: 'Use the project\'s own S3-compatible bucket (null or {enabled:false} goes back to platform storage)',
        body: Type.Union([Bucket, Disable, Type.Null()]),
        response: { 200: Envelope(Overview), ...errorReplies(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const body = req.body as BucketInput | { enabled: false } | null | undefined;
      const clear = body === null || body === undefined || (typeof body === 'object' && 'enabled' in body && body.enabled === false);
      if (req.validationError && !clear) throw StorageErrors.bucket_config_invalid();
      const view = await setBucket(ctx, operatorOf(req), req.params.projectId, clear ? null : (body as BucketInput));
      return ok(view, clear ? 'Project storage reset to platform storage.' : 'Project bucket saved.');
    },
  );
  app.put(
    '/api/projects/:projectId/files/settings',
    {
      attachValidation: true,
      schema: {
        ...common,
        summary: 'File rules of the project: default privacy, allowed media types (checked against the bytes), a smaller largest file',
        body: FileSettingsBody,
        response: { 200: Envelope(Overview), ...errorReplies(400, 401, 404) },
      },
    },
    async (req) => {
      if (req.validationError) throw StorageErrors.file_settings_invalid();
      return ok(await setFileSettings(ctx, operatorOf(req), req.params.projectId, req.body), 'File settings saved.');
    },
  );
}
