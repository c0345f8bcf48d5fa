/** Kysely types of the webhooks domain's tables (migrations/022_change_stream.sql). */
import type { Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookEndpointsTable {
  id: string;
  project_id: string;
  url: string;
  description: Generated<string>;
  events: Generated<string[]>;
  collections: Generated<string[]>;
  secret: JSONColumnType<Encrypted>;
  enabled: Generated<boolean>;
  disabled_reason: string | null;
  failing_since: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  project_id: string;
  event_type: string;
  payload: JSONColumnType<Record<string, unknown>>;
  status: Generated<DeliveryStatus>;
  attempts: Generated<number>;
  next_attempt_at: Timestamp | null;
  created_at: Timestamp;
  finished_at: Timestamp | null;
}

export interface WebhookAttemptsTable {
  delivery_id: string;
  attempt: number;
  at: Timestamp;
  status_code: number | null;
  duration_ms: number;
  response: string | null;
  error: string | null;
}

export interface WebhookTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}
