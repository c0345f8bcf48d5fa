/**
 * Broadcasts, proxied to Resend with the project's own key (Pro). A create with
 * `scheduledAt` creates the broadcast and schedules it at once (Resend schedules at send
 * time). Sender: body `from`, else the project's providerFromEmail, else MAIL_FROM.
 * Broadcasts do not use the monthly mail quota (they go out on the project's own account).
 */
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../projects/cache.js';
import { MailErrors } from './errors.js';
import { broadcastProvider, unwrap } from './gating.js';
import { isUuid } from './logs.js';
import { projectFrom } from './providers/select.js';

export interface BroadcastInput {
  audienceId?: string;
  subject?: string;
  html?: string;
  scheduledAt?: string;
  from?: string;
  name?: string;
}

const present = (s: unknown): s is string => typeof s === 'string' && s.trim() !== '';

function checkId(id: string): string {
  if (!isUuid(id)) throw MailErrors.mail_invalid_audience_id('Invalid broadcast identifier format.');
  return id;
}

export async function createBroadcast(ctx: AppContext, project: ProjectRecord, b: BroadcastInput) {
  const provider = broadcastProvider(ctx, project);
  if (!present(b.audienceId) || !present(b.subject) || !present(b.html)) throw MailErrors.mail_broadcast_fields();
  if (b.scheduledAt !== undefined && Number.isNaN(Date.parse(b.scheduledAt))) {
    throw MailErrors.mail_invalid_payload('scheduledAt must be an ISO 8601 timestamp.');
  }
  const from = (present(b.from) ? b.from : undefined) ?? projectFrom(project) ?? ctx.config.mail.from;
  const created = await unwrap(provider.createBroadcast({ audienceId: b.audienceId, from, subject: b.subject, html: b.html, name: b.name }));
  if (!b.scheduledAt) return created;
  await unwrap(provider.sendBroadcast(created.id, b.scheduledAt));
  return { ...created, scheduledAt: b.scheduledAt };
}

export async function sendBroadcast(ctx: AppContext, project: ProjectRecord, id: string, scheduledAt?: string) {
  const provider = broadcastProvider(ctx, project);
  return unwrap(provider.sendBroadcast(checkId(id), scheduledAt));
}

export async function listBroadcasts(ctx: AppContext, project: ProjectRecord) {
  return unwrap(broadcastProvider(ctx, project).listBroadcasts());
}

export async function getBroadcast(ctx: AppContext, project: ProjectRecord, id: string) {
  const provider = broadcastProvider(ctx, project);
  return unwrap(provider.getBroadcast(checkId(id)));
}

export async function removeBroadcast(ctx: AppContext, project: ProjectRecord, id: string) {
  const provider = broadcastProvider(ctx, project);
  return unwrap(provider.removeBroadcast(checkId(id)));
}
