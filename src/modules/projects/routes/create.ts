/** POST /api/projects: a new project; the raw keys are in this response only. */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import { operatorOf } from '../../operators/auth.js';
import type { App } from '../../../app.js';
import { envelopeOf } from '../../operators/schemas.js';
import { describeProject } from '../service.js';
import { CreatedProject } from '../schemas.js';
import { createProject } from '../service.js';

const Body = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  siteUrl: Type.Optional(Type.String({ maxLength: 2048, description: 'https://…, or http://localhost for development' })),
});

export default async function createRoute(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/projects',
    {
      schema: {
        tags: ['dashboard: projects'],
        summary: 'Create a project (keys are shown once)',
        body: Body,
        response: { 201: envelopeOf(CreatedProject) },
      },
    },
    async (req, reply) => {
      const operator = operatorOf(req);
      const { project, publishableKey, secretKey } = await createProject(ctx, operator, req.body);
      const view = await describeProject(ctx, 'owner', project);
      return reply.status(201).send(ok({ ...view, publishableKey, secretKey }, 'Project created. Store the keys now: they are not shown again.'));
    },
  );
}
