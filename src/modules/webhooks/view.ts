/** Webhook rows → wire shapes. The signing secret is never in them (shown once, at creation). */
import type { AttemptRow, DeliveryRow, EndpointRow } from './queries.js';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function endpointView(e: EndpointRow) {
  return {
    _id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    collections: e.collections,
    enabled: e.enabled,
    disabledReason: e.disabled_reason,
    failingSince: iso(e.failing_since),
    createdAt: iso(e.created_at)!,
    updatedAt: iso(e.updated_at)!,
  };
}

export function attemptView(a: AttemptRow) {
  return { attempt: a.attempt, at: iso(a.at)!, statusCode: a.status_code, durationMs: a.duration_ms, response: a.response, error: a.error };
}

export function deliveryView(d: DeliveryRow, attempts: AttemptRow[]) {
  return {
    _id: d.id,
    eventType: d.event_type,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: iso(d.next_attempt_at),
    createdAt: iso(d.created_at)!,
    finishedAt: iso(d.finished_at),
    payload: d.payload,
    log: attempts.filter((a) => a.delivery_id === d.id).map(attemptView),
  };
}
