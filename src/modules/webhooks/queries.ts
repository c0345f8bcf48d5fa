/** SQL of outbound webhooks: endpoints, the dispatcher's cursor, deliveries and attempts (owner connection). */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';
import type { Position } from '../realtime/position.js';
import type { WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from './tables.js';

type Db = Kysely<Database>;
export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export interface NewEndpoint {
  id: string;
  projectId: string;
  url: string;
  description: string;
  events: string[];
  collections: string[];
  secret: Encrypted;
}

export async function insertEndpoint(db: Db, e: NewEndpoint): Promise<EndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({ id: e.id, project_id: e.projectId, url: e.url, description: e.description, events: e.events, collections: e.collections, secret: JSON.stringify(e.secret) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function countEndpoints(db: Db, projectId: string): Promise<number> {
  const r = await db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', projectId).executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function listEndpoints(db: Db, projectId: string): Promise<EndpointRow[]> {
  return db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).orderBy('created_at').execute();
}

export async function findEndpoint(db: Db, projectId: string, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
}

export async function endpointById(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface EndpointChanges {
  url?: string;
  description?: string;
  events?: string[];
  collections?: string[];
  enabled?: boolean;
}

export async function updateEndpoint(db: Db, projectId: string, id: string, c: EndpointChanges, now: Date): Promise<EndpointRow | undefined> {
  const reenabled = c.enabled === true ? { disabled_reason: null, failing_since: null } : {};
  const disabled = c.enabled === false ? { disabled_reason: 'disabled by the operator' } : {};
  return db
    .updateTable('webhook_endpoints')
    .set({ ...c, ...reenabled, ...disabled, updated_at: now })
    .where('project_id', '=', projectId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Db, projectId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('webhook_endpoints').where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** Disables an endpoint (410 Gone, or failing too long); true when this call disabled it. */
export async function disableEndpoint(db: Db, id: string, reason: string, now: Date): Promise<boolean> {
  const r = await db.updateTable('webhook_endpoints').set({ enabled: false, disabled_reason: reason, updated_at: now }).where('id', '=', id).where('enabled', '=', true).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function markEndpointHealthy(db: Db, id: string): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', id).where('failing_since', 'is not', null).execute();
}

/** Records the first failure since the last success; returns since when the endpoint has been failing. */
export async function markEndpointFailing(db: Db, id: string, now: Date): Promise<Date> {
  const { rows } = await sql<{ failing_since: Date }>`
    UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, ${now}) WHERE id = ${id} RETURNING failing_since`.execute(db);
  return rows[0]?.failing_since ?? now;
}

// ---- the dispatcher ------------------------------------------------------------------------

/** The dispatcher's position, locked for this transaction; null when another dispatcher holds it. */
export async function lockCursor(tx: Db): Promise<Position | null> {
  const { rows } = await sql<{ xid: string; id: string }>`
    SELECT xid::text AS xid, id::text AS id FROM webhook_cursor FOR UPDATE SKIP LOCKED`.execute(tx);
  const r = rows[0];
  return r ? { xid: BigInt(r.xid), id: BigInt(r.id) } : null;
}

export async function moveCursor(tx: Db, to: Position): Promise<void> {
  await sql`UPDATE webhook_cursor SET xid = ${to.xid.toString()}::xid8, id = ${to.id.toString()}::int8`.execute(tx);
}

/** Enabled endpoints of these projects (the dispatcher matches changes against them in memory). */
export async function enabledEndpoints(db: Db, projectIds: string[]): Promise<EndpointRow[]> {
  if (projectIds.length === 0) return [];
  return db.selectFrom('webhook_endpoints').selectAll().where('project_id', 'in', projectIds).where('enabled', '=', true).execute();
}

export interface NewDelivery {
  id: string;
  endpointId: string;
  projectId: string;
  eventType: string;
  payload: Record<string, unknown>;
}

export async function insertDeliveries(tx: Db, ds: NewDelivery[]): Promise<void> {
  if (ds.length === 0) return;
  await tx
    .insertInto('webhook_deliveries')
    .values(ds.map((d) => ({ id: d.id, endpoint_id: d.endpointId, project_id: d.projectId, event_type: d.eventType, payload: JSON.stringify(d.payload) })))
    .execute();
}

// ---- deliveries and attempts ---------------------------------------------------------------

export async function deliveryById(db: Db, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | undefined> {
  return db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).where('id', '=', id).executeTakeFirst();
}

/** Counts one more attempt of a pending delivery; its number, or null when the delivery is no longer pending. */
export async function startAttempt(db: Db, id: string): Promise<number | null> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), next_attempt_at: null }))
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning('attempts')
    .executeTakeFirst();
  return r?.attempts ?? null;
}

export async function recordAttempt(db: Db, a: Omit<AttemptRow, 'at'>, now: Date): Promise<void> {
  await db.insertInto('webhook_attempts').values({ ...a, at: now }).onConflict((oc) => oc.columns(['delivery_id', 'attempt']).doNothing()).execute();
}

export async function finishDelivery(db: Db, id: string, status: 'succeeded' | 'failed', now: Date): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ status, finished_at: now, next_attempt_at: null }).where('id', '=', id).execute();
}

export async function scheduleRetry(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ next_attempt_at: at }).where('id', '=', id).execute();
}

/** A finished delivery back to pending (redeliver); false when it is still pending. */
export async function reopenDelivery(db: Db, id: string): Promise<boolean> {
  const r = await db.updateTable('webhook_deliveries').set({ status: 'pending', finished_at: null }).where('id', '=', id).where('status', '!=', 'pending').executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

export async function listDeliveries(db: Db, endpointId: string, limit: number, before?: Date): Promise<DeliveryRow[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId);
  if (before) q = q.where('created_at', '<', before);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export async function attemptsOf(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db.selectFrom('webhook_attempts').selectAll().where('delivery_id', 'in', deliveryIds).orderBy('delivery_id').orderBy('attempt').execute();
}
