/** GET /api/projects/:projectId/collections[/:name]: the project's collection records. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { loadMemberProject } from '../../projects/access.js';
import { CollectionParams, CollectionView, envelopeOf, ProjectParams } from '../schemas.js';
import { getCollection, listCollections } from '../service.js';
import { collectionView } from '../view.js';

export default async function readRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects/:projectId/collections',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: "List a project's collections",
        params: ProjectParams,
        response: { 200: envelopeOf(Type.Array(CollectionView)) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(await listCollections(ctx, project.id), 'Collections fetched');
    },
  );

  app.get(
    '/api/projects/:projectId/collections/:name',
    {
      schema: {
        tags: ['dashboard: collections'],
        summary: 'Get one collection',
        params: CollectionParams,
        response: { 200: envelopeOf(CollectionView) },
      },
    },
    async (req) => {
      const project = await loadMemberProject(ctx, operatorOf(req), req.params.projectId);
      return ok(collectionView(await getCollection(ctx, project.id, req.params.name)), 'Collection fetched');
    },
  );
}
