/** GET /api/projects (summaries with usage) and GET /api/projects/:projectId (sanitised). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { envelopeOf } from '../../operators/schemas.js';
import { getProject, listProjects } from '../service.js';
import { ProjectIdParams, ProjectSummary, ProjectView } from '../schemas.js';

const TAGS = ['dashboard: projects'];

export default async function readRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/projects',
    {
      schema: { tags: TAGS, summary: "The signed-in operator's projects", response: { 200: envelopeOf(Type.Array(ProjectSummary)) } },
    },
    async (req) => ok(await listProjects(ctx, operatorOf(req))),
  );

  app.get(
    '/api/projects/:projectId',
    {
      schema: { tags: TAGS, summary: 'One project, without secrets (has… flags instead)', params: ProjectIdParams, response: { 200: envelopeOf(ProjectView) } },
    },
    async (req) => ok(await getProject(ctx, operatorOf(req), req.params.projectId)),
  );
}
