/** SQL of the mail domain (logs, templates, outbox). Callers pass the tenant tx or admin db. */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';
import { isObjectId } from '../../lib/ids.js';
import type { MailLogsTable, MailProviderKind, MailTemplatesTable } from './tables.js';

type Db = Kysely<Database>;
export type MailLogRow = Selectable<MailLogsTable>;
export type TemplateRow = Selectable<MailTemplatesTable>;

/** Project mail runs in a tenant transaction ('system' scope); platform mail on the admin pool. */
export function scoped<T>(ctx: AppContext, projectId: string | null, fn: (db: Db) => Promise<T>): Promise<T> {
  if (projectId) return ctx.db.tenant({ projectId, keyKind: 'system' }, fn);
  return ctx.db.admin.transaction().execute(fn);
}

/** The same scope without a transaction, for a single statement (one round trip, autocommit). */
export function scopedRead<T>(ctx: AppContext, projectId: string | null, fn: (db: Db) => Promise<T>): Promise<T> {
  if (projectId) return ctx.db.read({ projectId, keyKind: 'system' }, fn);
  return fn(ctx.db.admin);
}

export interface NewLog {
  id: string;
  projectId: string | null;
  jobId: string | null;
  to: string;
  subject: string;
  provider: MailProviderKind;
  templateUsed?: string | null;
  tag?: string | null;
  charged: boolean;
  sentAt: Date;
  providerEmailId?: string | null;
  status?: 'queued' | 'sent';
}

/**
 * Enqueues many `mail.send` jobs in one call (sql/60_mail_policies.sql) and writes their
 * `queued` logs, each with its job id, in the same statement (one round trip for the lot).
 * Returns the job id by log id; a log whose job was refused (another project's) is not written.
 */
export async function addMailJobsWithLogs(
  db: Db,
  payloads: Array<{ logId: string }>,
  logs: Array<Omit<NewLog, 'jobId' | 'providerEmailId' | 'status'>>,
  maxAttempts: number,
): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; job_id: string }>`
    WITH jobs AS (SELECT log_id, id::text FROM plinth_add_mail_jobs(${JSON.stringify(payloads)}::json, ${maxAttempts}))
    INSERT INTO mail_logs (id, project_id, job_id, "to", subject, provider, using_byok, template_used, tag, charged, sent_at, status)
    SELECT l.id, l."projectId", jobs.id, l."to", l.subject, l.provider, l.provider = 'byok', l."templateUsed", l.tag, l.charged, l."sentAt", 'queued'
      FROM json_to_recordset(${JSON.stringify(logs)}::json) AS l(
             id text, "projectId" text, "to" text, subject text, provider text, "templateUsed" text, tag text, charged boolean, "sentAt" timestamptz)
      JOIN jobs ON jobs.log_id = l.id
    RETURNING id, job_id`.execute(db);
  return new Map(rows.map((r) => [r.id, r.job_id]));
}

/**
 * Logs mails the provider accepted; returns how many are new. A mail whose provider id is logged
 * already is skipped: a retried batch whose provider call replayed the first (the same provider
 * idempotency key) gets the same ids back.
 */
export async function insertLogs(db: Db, logs: NewLog[]): Promise<number> {
  const rows = await db
    .insertInto('mail_logs')
    .values(logs.map((l) => ({
      id: l.id,
      project_id: l.projectId,
      job_id: l.jobId,
      to: l.to,
      subject: l.subject,
      provider: l.provider,
      using_byok: l.provider === 'byok',
      template_used: l.templateUsed ?? null,
      tag: l.tag ?? null,
      charged: l.charged,
      sent_at: l.sentAt,
      provider_email_id: l.providerEmailId ?? null,
      status: l.status ?? 'queued',
      error: null,
      last_event_at: null,
    })))
    .onConflict((oc) => oc.column('provider_email_id').where('provider_email_id', 'is not', null).doNothing())
    .returning('id')
    .execute();
  return rows.length;
}

/** What a mail job needs, in one query: the log's state and its project's mail settings. */
export async function jobState(db: Db, logId: string) {
  const { rows } = await sql<{
    status: string;
    provider_email_id: string | null;
    project_id: string | null;
    settings: Record<string, unknown> | null;
    secrets: Record<string, Encrypted> | null;
  }>`
    SELECT l.status, l.provider_email_id, l.project_id, p.settings, p.secrets
    FROM mail_logs l LEFT JOIN projects p ON p.id = l.project_id
    WHERE l.id = ${logId}`.execute(db);
  return rows[0];
}

/** The provider accepted the message: record its id; `sent` unless an event already moved it. */
export async function markAccepted(db: Db, id: string, providerEmailId: string, provider: MailProviderKind): Promise<boolean> {
  const res = await sql`
    UPDATE mail_logs
    SET provider_email_id = ${providerEmailId}, provider = ${provider}, using_byok = ${provider === 'byok'},
        status = CASE WHEN last_event_at IS NULL THEN 'sent' ELSE status END, error = NULL, updated_at = now()
    WHERE id = ${id} AND provider_email_id IS NULL AND status = 'queued'`.execute(db);
  return Number(res.numAffectedRows ?? 0) > 0;
}

export async function markFailed(db: Db, id: string, error: string): Promise<boolean> {
  const res = await db
    .updateTable('mail_logs')
    .set({ status: 'failed', error: error.slice(0, 1000), updated_at: sql`now()` })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .where('provider_email_id', 'is', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export async function latestLogs(db: Db, projectId: string, limit = 50): Promise<MailLogRow[]> {
  return db
    .selectFrom('mail_logs')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('sent_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function logByProviderId(db: Db, projectId: string, providerEmailId: string): Promise<MailLogRow | undefined> {
  return db
    .selectFrom('mail_logs')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('provider_email_id', '=', providerEmailId)
    .executeTakeFirst();
}

/** A template visible to the project: its own or a global one. */
export async function templateById(db: Db, projectId: string, id: string): Promise<TemplateRow | undefined> {
  return db
    .selectFrom('mail_templates')
    .selectAll()
    .where('id', '=', id)
    .where((eb) => eb.or([eb('project_id', '=', projectId), eb('project_id', 'is', null)]))
    .executeTakeFirst();
}

/** By key or name, case-insensitively: the project's own first, then the global ones. */
export async function templateByName(db: Db, projectId: string, name: string): Promise<TemplateRow | undefined> {
  const lower = name.trim().toLowerCase();
  return db
    .selectFrom('mail_templates')
    .selectAll()
    .where((eb) => eb.or([eb('project_id', '=', projectId), eb('project_id', 'is', null)]))
    .where((eb) => eb.or([eb('key', '=', lower), eb(sql`lower(name)`, '=', lower)]))
    .orderBy(sql`project_id IS NULL`)
    .executeTakeFirst();
}

export async function listTemplates(db: Db, projectId: string | null): Promise<TemplateRow[]> {
  const q = db.selectFrom('mail_templates').selectAll();
  return (projectId ? q.where('project_id', '=', projectId) : q.where('project_id', 'is', null))
    .orderBy('updated_at', 'desc')
    .execute();
}

export async function listOutbox(db: Db, projectId: string, limit = 50) {
  return db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('project_id', '=', projectId)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();
}

// Templates (the project's own; global ones are read by listGlobal…)

type NewTemplate = { project_id: string; key: string; name: string; subject: string; html: string; text: string };
type TemplatePatch = { key: string; name: string; subject: string; html: string; text: string; updated_at: Date };

export function insertTemplate(db: Db, t: NewTemplate) {
  return db.insertInto('mail_templates').values(t).returningAll().executeTakeFirstOrThrow();
}

export function findProjectTemplate(db: Db, projectId: string, id: string) {
  return db.selectFrom('mail_templates').selectAll().where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
}

export function updateTemplateRow(db: Db, id: string, patch: TemplatePatch) {
  return db.updateTable('mail_templates').set(patch).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export function deleteTemplateRow(db: Db, projectId: string, id: string) {
  return db.deleteFrom('mail_templates').where('id', '=', id).where('project_id', '=', projectId).executeTakeFirst();
}

// The dev outbox

export function findOutboxMessage(db: Db, id: string) {
  return db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Stores a message in the dev outbox once per idempotency key, delivered (the outbox is its
 * own recipient); its id (the first one on a retry).
 */
export async function insertOutboxMessage(
  db: Db,
  m: { id: string; projectId: string | null; idempotencyKey: string; mail: { from: string; to: string[]; subject: string; html?: string; text?: string }; now: Date },
): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    INSERT INTO mail_outbox (id, project_id, mail_log_id, idempotency_key, "from", "to", subject, html, text, last_event, created_at)
    VALUES (${m.id}, ${m.projectId}, ${isObjectId(m.idempotencyKey) ? m.idempotencyKey : null}, ${m.idempotencyKey},
            ${m.mail.from}, ${JSON.stringify(m.mail.to)}::jsonb, ${m.mail.subject}, ${m.mail.html ?? null}, ${m.mail.text ?? null}, 'delivered', ${m.now})
    ON CONFLICT (idempotency_key) DO UPDATE SET idempotency_key = excluded.idempotency_key
    RETURNING id::text`.execute(db);
  return rows[0]!.id;
}
