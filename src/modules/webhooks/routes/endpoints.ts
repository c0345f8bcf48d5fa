/** /api/projects/:projectId/webhooks: a project's webhook endpoints (docs/webhooks.md). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, updateEndpoint, WEBHOOK_EVENTS } from '../service.js';
import { EndpointParams, EndpointView, envelope, ProjectParams } from './schemas.js';

const Events = Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), { maxItems: 4, description: 'actions to send; empty or absent: all' });
const Collections = Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100, description: 'collections to send; empty or absent: all' });
const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'https URL of a public host (http and private hosts outside production only)' });
const Description = Type.String({ maxLength: 500 });

const CreateBody = Type.Object({ url: Url, description: Type.Optional(Description), events: Type.Optional(Events), collections: Type.Optional(Collections) }, { additionalProperties: false });
const UpdateBody = Type.Object(
  { url: Type.Optional(Url), description: Type.Optional(Description), events: Type.Optional(Events), collections: Type.Optional(Collections), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export default async function endpointRoutes(app: App, ctx: AppContext): Promise<void> {
  const project = (req: { params: { projectId: string } }, op: Parameters<typeof loadMemberProject>[1]) => loadMemberProject(ctx, op, req.params.projectId);
  const tags = ['dashboard: webhooks'];

  app.post(
    '/api/projects/:projectId/webhooks',
    {
      schema: {
        tags,
        summary: 'Add a webhook endpoint (its signing secret is shown only in this answer)',
        params: ProjectParams,
        body: CreateBody,
        response: { 201: envelope(Type.Object({ endpoint: EndpointView, secret: Type.String({ description: 'whsec_…: verify signatures with it' }) })) },
      },
    },
    async (req, reply) => {
      const p = await project(req, operatorOf(req));
      return reply.status(201).send(ok(await createEndpoint(ctx, p.id, req.body), 'Webhook endpoint created'));
    },
  );

  app.get(
    '/api/projects/:projectId/webhooks',
    { schema: { tags, summary: "List a project's webhook endpoints", params: ProjectParams, response: { 200: envelope(Type.Array(EndpointView)) } } },
    async (req) => ok(await listEndpoints(ctx, (await project(req, operatorOf(req))).id), 'Webhook endpoints'),
  );

  app.get(
    '/api/projects/:projectId/webhooks/:endpointId',
    { schema: { tags, summary: 'Get a webhook endpoint', params: EndpointParams, response: { 200: envelope(EndpointView) } } },
    async (req) => ok(await getEndpoint(ctx, (await project(req, operatorOf(req))).id, req.params.endpointId), 'Webhook endpoint'),
  );

  app.patch(
    '/api/projects/:projectId/webhooks/:endpointId',
    { schema: { tags, summary: 'Change a webhook endpoint (enabled: true re-enables a disabled one)', params: EndpointParams, body: UpdateBody, response: { 200: envelope(EndpointView) } } },
    async (req) => ok(await updateEndpoint(ctx, (await project(req, operatorOf(req))).id, req.params.endpointId, req.body), 'Webhook endpoint updated'),
  );

  app.delete(
    '/api/projects/:projectId/webhooks/:endpointId',
    { schema: { tags, summary: 'Delete a webhook endpoint and its delivery log', params: EndpointParams, response: { 200: envelope(Type.Object({ deleted: Type.Boolean() })) } } },
    async (req) => {
      await deleteEndpoint(ctx, (await project(req, operatorOf(req))).id, req.params.endpointId);
      return ok({ deleted: true }, 'Webhook endpoint deleted');
    },
  );
}
