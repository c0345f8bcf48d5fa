/**
 * The `mail.send` job. Idempotent: the provider call carries Idempotency-Key = MailLog id,
 * so a job that dies after the provider accepted (and is retried) gets the same message id
 * back instead of sending twice; a log that is no longer `queued` is left alone. Transient
 * failures (network, timeout, 429, 5xx) throw, and graphile-worker retries with backoff;
 * a permanent failure, or the last attempt, marks the log `failed` and refunds the slot.
 */
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { refund } from '../../lib/quota-queries.js';
import { openJobMail, type MailJob } from './enqueue.js';
import { jobState, markAccepted, markFailed, scoped, scopedRead } from './queries.js';
import { senderFor, type Sender } from './providers/select.js';
import { mailCounter } from './quota.js';
import { applyStoredEvents } from './status-queries.js';

class TransientMailError extends Error {}

async function accepted(ctx: AppContext, job: MailJob, sender: Sender, providerEmailId: string): Promise<void> {
  await scopedRead(ctx, job.projectId, (db) => markAccepted(db, job.logId, providerEmailId, sender.kind));
  // Webhook events that arrived before we knew the id were stored; apply them now.
  const scope = sender.kind === 'byok' ? job.projectId! : '';
  await applyStoredEvents(ctx.db.admin, providerEmailId, scope);
  await sender.provider.afterAccepted?.(providerEmailId);
}

async function failed(ctx: AppContext, job: MailJob, reason: string): Promise<void> {
  await scoped(ctx, job.projectId, async (db) => {
    const changed = await markFailed(db, job.logId, reason);
    if (changed && job.charged && job.projectId) await refund(db, mailCounter(job.projectId, job.period), 1);
  });
}

export async function runMailJob(ctx: AppContext, job: MailJob, attempt: { attempts: number; max_attempts: number }): Promise<void> {
  const state = await scopedRead(ctx, job.projectId, (db) => jobState(db, job.logId));
  if (!state || state.status !== 'queued' || state.provider_email_id) return; // done, or project deleted
  const project = job.projectId ? { id: job.projectId, settings: state.settings ?? {}, secrets: state.secrets ?? {} } : null;
  const mail = openJobMail(ctx, job);
  if (!mail) {
    await failed(ctx, job, 'The queued message could not be decrypted (was ENCRYPTION_KEY changed?).');
    ctx.metrics.mailFailed('none');
    return;
  }
  const sender = senderFor(ctx, project);
  const res = await sender.provider.send({ from: sender.from, ...mail }, job.logId);
  if (res.ok) {
    await accepted(ctx, job, sender, res.data.id);
    ctx.metrics.mailSent(sender.kind);
    return;
  }
  const reason = `${res.status ?? 'network'}: ${res.message}`;
  if (res.transient && attempt.attempts < attempt.max_attempts) {
    ctx.metrics.mailRetried(sender.kind);
    throw new TransientMailError(reason);
  }
  ctx.log.warn({ logId: job.logId, projectId: job.projectId, reason }, 'mail failed permanently');
  await failed(ctx, job, res.message);
  ctx.metrics.mailFailed(sender.kind);
}

export const mailSendTask = (ctx: AppContext): Task => async (payload, helpers) => {
  await runMailJob(ctx, payload as MailJob, helpers.job);
};
