/**
 * Mail logs: the latest 50 of a project (by sentAt, newest first), and one log with the
 * provider's live view of it. Used by the public API (secret key) and the dashboard.
 */
import type { AppContext } from '../../context.js';
import type { KeyKind } from '../../db/pool.js';
import { MailErrors, providerError } from './errors.js';
import { latestLogs, logByProviderId, type MailLogRow } from './queries.js';
import { providerOfLog, type MailProject } from './providers/select.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export function logDto(row: MailLogRow) {
  return {
    id: row.id,
    jobId: row.job_id,
    providerEmailId: row.provider_email_id,
    to: row.to,
    subject: row.subject,
    status: row.status,
    provider: row.provider,
    usingByok: row.using_byok,
    templateUsed: row.template_used,
    error: row.error,
    sentAt: iso(row.sent_at),
    lastEventAt: iso(row.last_event_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

export type MailLogDto = ReturnType<typeof logDto>;

export async function listLogs(ctx: AppContext, projectId: string, keyKind: KeyKind): Promise<MailLogDto[]> {
  const rows = await ctx.db.read({ projectId, keyKind }, (db) => latestLogs(db, projectId, 50));
  return rows.map(logDto);
}

/** 400 for a malformed id, 404 when the log is not this project's; then the provider's view. */
export async function liveStatus(ctx: AppContext, project: MailProject, providerId: string, keyKind: KeyKind) {
  if (!isUuid(providerId)) throw MailErrors.mail_invalid_provider_id();
  const row = await ctx.db.read({ projectId: project.id, keyKind }, (db) => logByProviderId(db, project.id, providerId));
  if (!row) throw MailErrors.mail_log_not_found();
  const provider = providerOfLog(ctx, project, row.provider);
  if (!provider) return { dbLog: logDto(row), providerStatus: null };
  const res = await provider.getEmail(providerId);
  if (!res.ok) throw providerError(res.status, res.message);
  return { dbLog: logDto(row), providerStatus: res.data };
}
