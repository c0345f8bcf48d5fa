/**
 * Webhook endpoints of a project (for its operator), their delivery log, a test send and a
 * redelivery. Knows no HTTP. An endpoint change re-decides which collections write to the
 * change stream (collections/change-trigger-queries.ts), in the same transaction.
 */
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { objectId } from '../../lib/ids.js';
import { syncChangeTriggers } from '../collections/change-trigger-queries.js';
import { attemptDelivery, enqueueAttempt } from './delivery.js';
import { checkEndpointUrl } from './endpoint-url.js';
import { WebhookErrors } from './errors.js';
import * as q from './queries.js';
import { deliveryView, endpointView } from './view.js';

export const WEBHOOK_EVENTS = ['create', 'update', 'delete', 'restore'] as const;
export const MAX_ENDPOINTS = 20;

export interface EndpointInput {
  url?: string;
  description?: string;
  events?: string[];
  collections?: string[];
  enabled?: boolean;
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function normalised(ctx: AppContext, input: EndpointInput): q.EndpointChanges {
  const out: q.EndpointChanges = {};
  if (input.url !== undefined) out.url = checkEndpointUrl(input.url, ctx.config.webhooks.allowPrivateUrls);
  if (input.description !== undefined) out.description = input.description;
  if (input.events !== undefined) out.events = [...new Set(input.events)];
  if (input.collections !== undefined) out.collections = [...new Set(input.collections.map((c) => c.toLowerCase()))];
  if (input.enabled !== undefined) out.enabled = input.enabled;
  return out;
}

async function owned(ctx: AppContext, projectId: string, endpointId: string): Promise<q.EndpointRow> {
  const e = await q.findEndpoint(ctx.db.admin, projectId, endpointId);
  if (!e) throw WebhookErrors.webhook_endpoint_not_found();
  return e;
}

export async function createEndpoint(ctx: AppContext, projectId: string, input: EndpointInput & { url: string }) {
  const c = normalised(ctx, input);
  const secret = newSecret();
  const row = await ctx.db.admin.transaction().execute(async (tx) => {
    if ((await q.countEndpoints(tx, projectId)) >= MAX_ENDPOINTS) throw WebhookErrors.webhook_endpoints_limit(`At most ${MAX_ENDPOINTS} webhook endpoints per project.`);
    const created = await q.insertEndpoint(tx, {
      id: objectId(),
      projectId,
      url: c.url!,
      description: c.description ?? '',
      events: c.events ?? [],
      collections: c.collections ?? [],
      secret: encrypt(ctx.config.encryptionKey, secret),
    });
    await syncChangeTriggers(tx, projectId);
    return created;
  });
  return { endpoint: endpointView(row), secret };
}

export async function listEndpoints(ctx: AppContext, projectId: string) {
  return (await q.listEndpoints(ctx.db.admin, projectId)).map(endpointView);
}

export async function getEndpoint(ctx: AppContext, projectId: string, endpointId: string) {
  return endpointView(await owned(ctx, projectId, endpointId));
}

export async function updateEndpoint(ctx: AppContext, projectId: string, endpointId: string, input: EndpointInput) {
  const c = normalised(ctx, input);
  const row = await ctx.db.admin.transaction().execute(async (tx) => {
    const updated = await q.updateEndpoint(tx, projectId, endpointId, c, ctx.clock.now());
    if (!updated) throw WebhookErrors.webhook_endpoint_not_found();
    await syncChangeTriggers(tx, projectId);
    return updated;
  });
  return endpointView(row);
}

export async function deleteEndpoint(ctx: AppContext, projectId: string, endpointId: string) {
  await ctx.db.admin.transaction().execute(async (tx) => {
    if (!(await q.deleteEndpoint(tx, projectId, endpointId))) throw WebhookErrors.webhook_endpoint_not_found();
    await syncChangeTriggers(tx, projectId);
  });
}

/** Sends a `webhook.test` event now (one attempt, logged, not retried) and returns how it went. */
export async function sendTest(ctx: AppContext, projectId: string, endpointId: string) {
  const e = await owned(ctx, projectId, endpointId);
  const id = `msg_${objectId()}`;
  const payload = { type: 'webhook.test', timestamp: ctx.clock.now().toISOString(), data: { endpoint: e.id, message: 'A test event from Plinth.' } };
  await q.insertDeliveries(ctx.db.admin, [{ id, endpointId: e.id, projectId, eventType: 'webhook.test', payload }]);
  const outcome = await attemptDelivery(ctx, id, { retry: false }); // a disabled endpoint: failed, nothing sent
  return deliveryOf(ctx, e.id, id, outcome);
}

async function deliveryOf(ctx: AppContext, endpointId: string, id: string, outcome?: string) {
  const d = await q.findDelivery(ctx.db.admin, endpointId, id);
  if (!d) throw WebhookErrors.webhook_delivery_not_found();
  return { ...deliveryView(d, await q.attemptsOf(ctx.db.admin, [d.id])), ...(outcome ? { outcome } : {}) };
}

export async function listDeliveries(ctx: AppContext, projectId: string, endpointId: string, limit: number, before?: string) {
  const e = await owned(ctx, projectId, endpointId);
  const beforeDate = before === undefined ? undefined : new Date(before);
  const rows = await q.listDeliveries(ctx.db.admin, e.id, limit, beforeDate && !Number.isNaN(beforeDate.getTime()) ? beforeDate : undefined);
  const attempts = await q.attemptsOf(ctx.db.admin, rows.map((d) => d.id));
  return rows.map((d) => deliveryView(d, attempts));
}

/** Sends a finished delivery once more (same webhook-id, one attempt, logged like the others). */
export async function redeliver(ctx: AppContext, projectId: string, endpointId: string, deliveryId: string) {
  const e = await owned(ctx, projectId, endpointId);
  const d = await q.findDelivery(ctx.db.admin, e.id, deliveryId);
  if (!d) throw WebhookErrors.webhook_delivery_not_found();
  await ctx.db.admin.transaction().execute(async (tx) => {
    if (await q.reopenDelivery(tx, d.id)) await enqueueAttempt(ctx, d.id, undefined, tx, false);
  });
  return deliveryOf(ctx, e.id, d.id);
}
