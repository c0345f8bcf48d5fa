/** /api/projects/:projectId/function-secrets: write-only secrets every function reads as `plinth.env` (docs/functions.md). */
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { deleteSecret, listSecrets, setSecret } from '../service.js';
import { envelope, ProjectParams, SecretBody, SecretParams } from './schemas.js';

export default async function secretRoutes(app: App, ctx: AppContext): Promise<void> {
  const project = async (req: FastifyRequest) => (await loadMemberProject(ctx, operatorOf(req), (req.params as { projectId: string }).projectId)).id;
  const tags = ['dashboard: functions'];

  app.get(
    '/api/projects/:projectId/function-secrets',
    { schema: { tags, summary: "The names of a project's function secrets (never their values)", params: ProjectParams, response: { 200: envelope(Type.Array(Type.Object({ name: Type.String(), updatedAt: Type.String() }))) } } },
    async (req) => ok(await listSecrets(ctx, await project(req)), 'Function secrets'),
  );

  app.put(
    '/api/projects/:projectId/function-secrets/:name',
    { schema: { tags, summary: 'Set a secret (encrypted at rest; no route reads it back)', params: SecretParams, body: SecretBody, response: { 200: envelope(Type.Object({ name: Type.String() })) } } },
    async (req) => {
      await setSecret(ctx, await project(req), req.params.name, req.body.value);
      return ok({ name: req.params.name }, 'Function secret set');
    },
  );

  app.delete(
    '/api/projects/:projectId/function-secrets/:name',
    { schema: { tags, summary: 'Delete a secret', params: SecretParams, response: { 200: envelope(Type.Object({ deleted: Type.Boolean() })) } } },
    async (req) => {
      await deleteSecret(ctx, await project(req), req.params.name);
      return ok({ deleted: true }, 'Function secret deleted');
    },
  );
}
