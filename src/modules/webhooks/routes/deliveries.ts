/** A webhook endpoint's delivery log, a test send and a redelivery (docs/webhooks.md). */
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../../context.js';
import { ok } from '../../../lib/envelope.js';
import type { App } from '../../../app.js';
import { operatorOf } from '../../operators/auth.js';
import { loadMemberProject } from '../../projects/access.js';
import { listDeliveries, redeliver, sendTest } from '../service.js';
import { DeliveryParams, DeliveryView, EndpointParams, envelope } from './schemas.js';

const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  before: Type.Optional(Type.String({ format: 'date-time', description: 'deliveries created before this time (paging)' })),
});

export default async function deliveryRoutes(app: App, ctx: AppContext): Promise<void> {
  const tags = ['dashboard: webhooks'];
  const projectOf = async (req: { params: { projectId: string } }, op: Parameters<typeof loadMemberProject>[1]) => (await loadMemberProject(ctx, op, req.params.projectId)).id;

  app.get(
    '/api/projects/:projectId/webhooks/:endpointId/deliveries',
    { schema: { tags, summary: "An endpoint's deliveries, newest first, each with its attempts", params: EndpointParams, querystring: ListQuery, response: { 200: envelope(Type.Array(DeliveryView)) } } },
    async (req) => ok(await listDeliveries(ctx, await projectOf(req, operatorOf(req)), req.params.endpointId, req.query.limit ?? 20, req.query.before), 'Webhook deliveries'),
  );

  app.post(
    '/api/projects/:projectId/webhooks/:endpointId/test',
    { schema: { tags, summary: 'Send a webhook.test event now and show the attempt', params: EndpointParams, response: { 200: envelope(DeliveryView) } } },
    async (req) => ok(await sendTest(ctx, await projectOf(req, operatorOf(req)), req.params.endpointId), 'Test event sent'),
  );

  app.post(
    '/api/projects/:projectId/webhooks/:endpointId/deliveries/:deliveryId/redeliver',
    { schema: { tags, summary: 'Send a delivery once more (same webhook-id)', params: DeliveryParams, response: { 202: envelope(DeliveryView) } } },
    async (req, reply) => reply.status(202).send(ok(await redeliver(ctx, await projectOf(req, operatorOf(req)), req.params.endpointId, req.params.deliveryId), 'Redelivery queued')),
  );
}
