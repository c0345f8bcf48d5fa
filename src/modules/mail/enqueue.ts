/**
 * Queues messages: writes their MailLogs (`queued`) and `mail.send` jobs in the caller's
 * transaction, so both exist or neither does. A job's message (recipients, subject, body) is
 * AES-256-GCM encrypted with ENCRYPTION_KEY: job rows reach the WAL and backups, and bodies
 * carry one-time codes (verification, password reset) and whatever else senders put there. Many messages go in with one statement each
 * (plinth_add_mail_jobs: one NOTIFY, one commit for the lot). Used by
 * /api/mail/send (through group-commit.ts) and the system mailer.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../database.js';
import { decrypt, encrypt, type Encrypted } from '../../lib/crypto.js';
import { objectId } from '../../lib/ids.js';
import { addMailJobsWithLogs } from './queries.js';
import type { QueuedMail } from './group-types.js';

export type { QueuedMail } from './group-types.js';

/** graphile-worker retries a thrown job with exponential backoff (e^n s): ~30 min over 8 tries. */
export const MAIL_MAX_ATTEMPTS = 8;

export interface JobMail {
  to: string[];
  subject: string;
  html?: string;
  text?: string;
}

export interface MailJob {
  logId: string;
  projectId: string | null;
  /** Whether the message holds a quota slot (refunded on terminal failure) and of which month. */
  charged: boolean;
  period: string;
  /** The JobMail, encrypted. */
  sealed: Encrypted;
  /** Jobs queued by earlier versions carry the message in clear; they are still sent. */
  mail?: JobMail;
}

/** The job's message; null when it cannot be decrypted (ENCRYPTION_KEY changed, or tampering). */
export function openJobMail(ctx: AppContext, job: MailJob): JobMail | null {
  if (!job.sealed && job.mail) return job.mail;
  const plain = decrypt(ctx.config.encryptionKey, job.sealed);
  return plain === null ? null : (JSON.parse(plain) as JobMail);
}

export async function enqueueMails(ctx: AppContext, db: Kysely<Database>, mails: QueuedMail[]): Promise<Array<{ jobId: string; logId: string }>> {
  const now = ctx.clock.now();
  const jobs: MailJob[] = mails.map((m) => ({
    logId: objectId(now.getTime()),
    projectId: m.projectId,
    charged: m.charged,
    period: m.period,
    sealed: encrypt(ctx.config.encryptionKey, JSON.stringify({ to: m.to, subject: m.subject, html: m.html, text: m.text } satisfies JobMail)),
  }));
  const logs = mails.map((m, i) => ({
    id: jobs[i]!.logId,
    projectId: m.projectId,
    to: m.to.join(', '),
    subject: m.subject,
    provider: m.provider,
    templateUsed: m.templateUsed,
    tag: m.tag,
    charged: m.charged,
    sentAt: now,
  }));
  const jobIds = await addMailJobsWithLogs(db, jobs, logs, MAIL_MAX_ATTEMPTS);
  if (jobIds.size !== jobs.length) throw new Error('mail jobs were not enqueued');
  return jobs.map((j) => ({ logId: j.logId, jobId: jobIds.get(j.logId)! }));
}
