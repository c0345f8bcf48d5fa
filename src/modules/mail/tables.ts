/** Kysely types of the mail domain's tables (migrations/006_mail.sql). */
import type { Generated, JSONColumnType } from 'kysely';
import type { Timestamp } from '../../db/types.js';

export type MailStatus = 'queued' | 'sent' | 'delivered' | 'bounced' | 'complained' | 'failed';
export type MailProviderKind = 'byok' | 'default' | 'outbox';

export interface MailLogsTable {
  id: string;
  project_id: string | null;
  job_id: string | null;
  provider_email_id: string | null;
  to: string;
  subject: string;
  status: Generated<MailStatus>;
  provider: MailProviderKind;
  using_byok: Generated<boolean>;
  template_used: string | null;
  tag: string | null;
  charged: Generated<boolean>;
  error: string | null;
  sent_at: Timestamp;
  last_event_at: Timestamp | null;
  last_event_rank: Generated<number>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MailEventsTable {
  scope: string;
  event_id: string;
  email_id: string;
  type: string;
  event_at: Timestamp;
  received_at: Timestamp;
}

export interface MailTemplatesTable {
  id: Generated<string>;
  project_id: string | null;
  key: string;
  name: string;
  subject: Generated<string>;
  html: Generated<string>;
  text: Generated<string>;
  is_system: Generated<boolean>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface MailOutboxTable {
  id: string;
  project_id: string | null;
  mail_log_id: string | null;
  idempotency_key: string;
  from: string;
  to: JSONColumnType<string[], string, string>;
  subject: string;
  html: string | null;
  text: string | null;
  last_event: Generated<string>;
  created_at: Timestamp;
}

/** A project's own text of one auth mail in one locale (migrations/061_auth_mail_templates.sql). */
export interface AuthMailTemplatesTable {
  project_id: string;
  kind: string;
  locale: string;
  subject: string;
  html: string;
  text: string;
  updated_at: Timestamp;
}

export interface MailTables {
  auth_mail_templates: AuthMailTemplatesTable;
  mail_logs: MailLogsTable;
  mail_events: MailEventsTable;
  mail_templates: MailTemplatesTable;
  mail_outbox: MailOutboxTable;
}
