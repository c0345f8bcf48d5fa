/** Kysely types of the usage domain's tables (migrations/073_usage_history.sql). */
import type { ColumnType, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';
import type { Encrypted } from '../../lib/crypto.js';

export interface UsageHourlyTable {
  project_id: string;
  /** The UTC hour's start. */
  hour: Timestamp;
  metric: string;
  /** '' for counted and sampled metrics; a node's id for its realtime peak. */
  node: ColumnType<string, string | undefined, string>;
  value: ColumnType<string, number | string, number | string>;
}

export interface UsageAlertSettingsTable {
  project_id: string;
  enabled: ColumnType<boolean, boolean | undefined, boolean>;
  error_rate_percent: number | null;
  p99_ms: number | null;
  cooldown_minutes: ColumnType<number, number | undefined, number>;
  webhook_url: string | null;
  webhook_secret: JSONColumnType<Encrypted | null, string | null, string | null>;
  updated_at: Timestamp;
}

export interface UsageAlertsSentTable {
  subject_id: string;
  alert: string;
  period: string;
  project_id: string;
  fired_at: Timestamp;
  detail: JSONColumnType<Record<string, unknown>, string, string>;
}

export interface UsageTables {
  usage_hourly: UsageHourlyTable;
  usage_alert_settings: UsageAlertSettingsTable;
  usage_alerts_sent: UsageAlertsSentTable;
}
