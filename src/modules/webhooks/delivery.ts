/**
 * Delivering one webhook: sign it by the Standard Webhooks scheme (the `standardwebhooks`
 * library: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`),
 * POST it (sender.ts), log the attempt, then:
 *
 * - 2xx: delivered; the endpoint is healthy again;
 * - 410 Gone: the receiver asks us to stop: the endpoint is disabled;
 * - anything else (3xx included, or no answer): retried on RETRY_SCHEDULE (with ±20 % jitter;
 *   later when the answer's Retry-After asks for more), up to its end; an endpoint that has
 *   failed every delivery for WEBHOOK_DISABLE_AFTER_HOURS is disabled and its operator emailed.
 *
 * Each attempt is a graphile-worker job (`webhooks.deliver`), so a crash of a worker loses no
 * delivery: the job is run again. The `webhook-id` stays the delivery's id across attempts,
 * for receivers to de-duplicate on (delivery is at least once).
 */
import { Webhook } from 'standardwebhooks';
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { decrypt } from '../../lib/crypto.js';
import * as q from './queries.js';
import { postWebhook, type SendResult } from './sender.js';

export const DELIVER_TASK = 'webhooks.deliver';

/** Delay before attempt n + 1 (n from 1): 8 attempts over about a day and a half. */
export const RETRY_SCHEDULE_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];
const RETRY_AFTER_MAX_SECONDS = 24 * 3600;

export type AttemptOutcome = 'succeeded' | 'retrying' | 'failed' | 'gone' | 'skipped';

/** Delay after the `attempt`-th attempt failed (null: no attempt left). */
export function retryDelaySeconds(attempt: number, retryAfter: number | null, random = Math.random): number | null {
  const base = RETRY_SCHEDULE_SECONDS[attempt];
  if (base === undefined) return null;
  const jittered = base * (0.8 + 0.4 * random());
  return Math.max(jittered, Math.min(retryAfter ?? 0, RETRY_AFTER_MAX_SECONDS));
}

/** The signature headers of a webhook (the one implementation: usage alerts sign with it too). */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Plinth-Webhooks/1',
    'webhook-id': id,
    'webhook-timestamp': Math.floor(at.getTime() / 1000).toString(),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

/** Enqueues an attempt; `retry: false` (a redelivery) makes it the only one. */
export async function enqueueAttempt(ctx: AppContext, deliveryId: string, runAt?: Date, db = ctx.db.admin, retry = true): Promise<void> {
  // One job per attempt. The task throws only when the database fails it (an HTTP failure is a
  // logged attempt); graphile-worker then retries the job with its own backoff, for days, so a
  // database outage or a crashed worker leaves no delivery pending without a job.
  await ctx.queue.add(DELIVER_TASK, { deliveryId, ...(retry ? {} : { retry: false }) }, { runAt, maxAttempts: 25 }, db);
}

async function send(ctx: AppContext, endpoint: q.EndpointRow, delivery: q.DeliveryRow): Promise<SendResult> {
  const secret = decrypt(ctx.config.encryptionKey, endpoint.secret);
  if (!secret) return { status: null, durationMs: 0, response: null, error: 'the endpoint secret cannot be read (ENCRYPTION_KEY changed?)', retryAfterSeconds: null };
  const body = JSON.stringify(delivery.payload);
  const headers = signedHeaders(secret, delivery.id, ctx.clock.now(), body);
  return postWebhook(endpoint.url, headers, body, { timeoutMs: ctx.config.webhooks.timeoutMs, allowPrivate: ctx.config.webhooks.allowPrivateUrls });
}

/** One attempt of a pending delivery; `retry: false` for a test send (logged, never retried). */
export async function attemptDelivery(ctx: AppContext, deliveryId: string, opts: { retry?: boolean } = {}): Promise<AttemptOutcome> {
  const db = ctx.db.admin;
  const delivery = await q.deliveryById(db, deliveryId);
  const endpoint = delivery && (await q.endpointById(db, delivery.endpoint_id));
  if (!delivery || !endpoint || delivery.status !== 'pending') return 'skipped';
  const now = ctx.clock.now();
  if (!endpoint.enabled) {
    await q.finishDelivery(db, delivery.id, 'failed', now);
    return 'failed';
  }
  const attempt = await q.startAttempt(db, delivery.id);
  if (attempt === null) return 'skipped';
  const result = await send(ctx, endpoint, delivery);
  const done = ctx.clock.now();
  await q.recordAttempt(db, { delivery_id: delivery.id, attempt, status_code: result.status, duration_ms: result.durationMs, response: result.response, error: result.error }, done);
  if (result.status !== null && result.status >= 200 && result.status < 300) {
    await q.finishDelivery(db, delivery.id, 'succeeded', done);
    await q.markEndpointHealthy(db, endpoint.id);
    return 'succeeded';
  }
  if (result.status === 410) {
    await q.finishDelivery(db, delivery.id, 'failed', done);
    await q.disableEndpoint(db, endpoint.id, 'the endpoint answered 410 Gone', done);
    return 'gone';
  }
  const failingSince = await q.markEndpointFailing(db, endpoint.id, done);
  if (done.getTime() - failingSince.getTime() >= ctx.config.webhooks.disableAfterHours * 3600_000) {
    await q.finishDelivery(db, delivery.id, 'failed', done);
    if (await q.disableEndpoint(db, endpoint.id, `every delivery failed for ${ctx.config.webhooks.disableAfterHours} hours`, done)) {
      await tellOperator(ctx, endpoint);
    }
    return 'failed';
  }
  const delay = opts.retry === false ? null : retryDelaySeconds(attempt, result.retryAfterSeconds);
  if (delay === null) {
    await q.finishDelivery(db, delivery.id, 'failed', done);
    return 'failed';
  }
  const at = new Date(done.getTime() + delay * 1000);
  await q.scheduleRetry(db, delivery.id, at);
  await enqueueAttempt(ctx, delivery.id, at);
  return 'retrying';
}

async function tellOperator(ctx: AppContext, endpoint: q.EndpointRow): Promise<void> {
  const project = await ctx.projects.byId(endpoint.project_id);
  if (!project?.ownerEmail) return;
  const hours = ctx.config.webhooks.disableAfterHours;
  await ctx.mailer
    .sendSystemMail({
      projectId: null,
      to: project.ownerEmail,
      subject: `Webhook endpoint disabled in ${project.name}`,
      text: `Every delivery to ${endpoint.url} has failed for ${hours} hours, so it was disabled. Fix the endpoint, then enable it again in the dashboard; failed deliveries can be sent again from its delivery log.`,
      html: `<p>Every delivery to <code>${escapeHtml(endpoint.url)}</code> has failed for ${hours} hours, so it was disabled.</p><p>Fix the endpoint, then enable it again in the dashboard; failed deliveries can be sent again from its delivery log.</p>`,
      tag: 'webhooks.disabled',
    })
    .catch((err: unknown) => ctx.log.error({ err: (err as Error).message }, 'webhook: the disabled-endpoint mail failed'));
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export const deliverTask = (ctx: AppContext): Task => async (payload) => {
  const { deliveryId, retry } = payload as { deliveryId?: unknown; retry?: unknown };
  if (typeof deliveryId === 'string') await attemptDelivery(ctx, deliveryId, { retry: retry !== false });
};
