/**
 * The console's file actions (operator session, project owner only): the same three-step
 * upload as the public API (request a signed URL, PUT the bytes, confirm) and delete, run by
 * the storage services with the secret key's rights, so the browser never holds that key.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { ProjectErrors } from '../../projects/errors.js';
import { confirmUpload } from '../confirm.js';
import { StorageErrors } from '../errors.js';
import { deleteFile, requestUpload, type Caller } from '../service.js';
import { Envelope, errorReplies, FileView } from './schemas.js';
import { DownloadBody, DownloadReply, PrivacyBody, PrivacyReply } from './private-files.js';
import { downloadUrl, setPrivacy } from '../download-service.js';

const Params = Type.Object({ projectId: Type.String() });
const RequestBody = Type.Object({
  filename: Type.String({ minLength: 1, maxLength: 1024 }),
  contentType: Type.String({ minLength: 1, maxLength: 255 }),
  size: Type.Integer({ minimum: 1 }),
  private: Type.Optional(Type.Boolean()),
});
const ConfirmBody = Type.Object({ filePath: Type.String({ minLength: 1, maxLength: 2048 }), size: Type.Integer({ minimum: 1 }) });
const DeleteBody = Type.Object({ path: Type.String({ minLength: 1, maxLength: 2048 }) });
const Signed = Type.Object({ signedUrl: Type.String(), filePath: Type.String(), expiresAt: Type.String() });

/** The owned project as a storage caller with full rights (like the secret key). */
export async function ownerCaller(ctx: AppContext, req: FastifyRequest, projectId: string): Promise<Caller> {
  const row = await loadMemberProject(ctx, operatorOf(req), projectId);
  const project = await ctx.projects.byId(row.id);
  if (!project) throw ProjectErrors.project_not_found();
  return { project, keyKind: 'secret', userId: null };
}

export default async function dashboardFileRoutes(app: App, ctx: AppContext): Promise<void> {
  const common = { tags: ['storage'], params: Params };

  app.post(
    '/api/projects/:projectId/files/upload-request',
    {
      attachValidation: true,
      schema: { ...common, summary: 'Step 1 of an upload from the console: a signed URL to PUT the bytes to', body: RequestBody, response: { 200: Envelope(Signed), ...errorReplies(400, 401, 403, 404, 413) } },
    },
    async (req) => {
      const caller = await ownerCaller(ctx, req, req.params.projectId);
      if (req.validationError) throw StorageErrors.upload_request_invalid();
      return ok(await requestUpload(ctx, caller, req.body), 'Upload URL generated');
    },
  );

  app.post(
    '/api/projects/:projectId/files/upload-confirm',
    {
      attachValidation: true,
      schema: { ...common, summary: 'Step 3 of an upload from the console: check the object, charge the quota', body: ConfirmBody, response: { 200: Envelope(FileView), ...errorReplies(400, 401, 403, 404, 409, 502) } },
    },
    async (req) => {
      const caller = await ownerCaller(ctx, req, req.params.projectId);
      if (req.validationError) throw StorageErrors.upload_confirm_invalid();
      return ok(await confirmUpload(ctx, caller, req.body), 'Upload confirmed');
    },
  );

  app.delete(
    '/api/projects/:projectId/files',
    {
      attachValidation: true,
      schema: { ...common, summary: 'Delete a file of the project (irreversible; frees its quota)', body: DeleteBody, response: { 200: Envelope(Type.Object({})), ...errorReplies(400, 401, 403, 404, 502) } },
    },
    async (req) => {
      const caller = await ownerCaller(ctx, req, req.params.projectId);
      if (req.validationError) throw StorageErrors.file_path_required();
      await deleteFile(ctx, caller, req.body);
      return { success: true as const, data: {}, message: 'File deleted successfully' };
    },
  );

  app.patch(
    '/api/projects/:projectId/files',
    {
      attachValidation: true,
      schema: { ...common, summary: 'Make one file private or public (null: the project default)', body: PrivacyBody, response: { 200: Envelope(PrivacyReply), ...errorReplies(400, 401, 403, 404) } },
    },
    async (req) => {
      const caller = await ownerCaller(ctx, req, req.params.projectId);
      if (req.validationError) throw StorageErrors.file_path_required('path and private (true, false or null) are required.');
      return ok(await setPrivacy(ctx, caller, req.body), 'File updated');
    },
  );

  app.post(
    '/api/projects/:projectId/files/download-url',
    {
      attachValidation: true,
      schema: { ...common, summary: 'A short-lived signed URL to one file (previews of private files in the console)', body: DownloadBody, response: { 200: Envelope(DownloadReply), ...errorReplies(400, 401, 403, 404, 502) } },
    },
    async (req) => {
      const caller = await ownerCaller(ctx, req, req.params.projectId);
      if (req.validationError) throw StorageErrors.file_path_required();
      return ok(await downloadUrl(ctx, caller, req.body), 'Download URL generated');
    },
  );
}
