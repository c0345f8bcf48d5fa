/**
 * The shapes of the mail group commit (group-commit.ts), apart from the code that runs it:
 * context.ts lists the node's `MailGroups`, and the code takes the AppContext, so they live in a
 * file that imports neither (no import cycle).
 */
import type { Coalescer } from '../../lib/coalescer.js';
import type { MailProviderKind } from './tables.js';

/** One message to queue (enqueue.ts). */
export interface QueuedMail {
  projectId: string | null;
  to: string[];
  subject: string;
  html?: string;
  text?: string;
  provider: MailProviderKind;
  templateUsed?: string;
  tag?: string;
  charged: boolean;
  period: string;
}

export interface Queued {
  jobId: string;
  monthlyUsage: number;
}

/** Sends that may share a transaction: one project, one quota month, one limit. */
export interface GroupKey {
  projectId: string;
  period: string;
  limit: number;
}

export type MailGroups = Coalescer<GroupKey, QueuedMail, Queued>;
