/**
 * Group commit for /api/mail/send. Sends of one project that arrive while its previous
 * transaction is still committing wait and then go in together: ONE tenant transaction
 * writes all their MailLogs and jobs and reserves all their slots with one guarded update.
 * A lone request is never delayed (it commits at once). Without this, every send would
 * serialise on the project's counter row and on the queue's NOTIFY for a full commit.
 *
 * Exactness is kept: if the group does not fit in what is left of the quota, the whole
 * transaction rolls back and its requests are retried one by one (each reserving 1), so
 * exactly the remaining slots are handed out. The batching itself is src/lib/coalescer.ts.
 */
import type { AppContext } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { Coalescer } from '../../lib/coalescer.js';
import { reserve } from '../../lib/quota-queries.js';
import { enqueueMails, type QueuedMail } from './enqueue.js';
import type { GroupKey, MailGroups, Queued } from './group-types.js';
import { mailQuotaExceeded } from './errors.js';
import { mailCounter } from './quota.js';

export type { GroupKey, MailGroups, Queued } from './group-types.js';

const MAX_GROUP = 200;

export interface GroupItem {
  projectId: string;
  limit: number;
  mail: QueuedMail;
}

class QuotaShort extends Error {}

/** The group's MailLogs, jobs and slots, in the caller's transaction `tx`. */
async function queueAll(ctx: AppContext, tx: Tx, key: GroupKey, mails: QueuedMail[]): Promise<Queued[]> {
  const queued = await enqueueMails(ctx, tx, mails);
  const used = await reserve(tx, mailCounter(key.projectId, key.period), mails.length, key.limit);
  if (used === null) throw new QuotaShort();
  return queued.map((q, i) => ({ jobId: q.jobId, monthlyUsage: used - mails.length + i + 1 }));
}

async function commitGroup(ctx: AppContext, key: GroupKey, mails: QueuedMail[]): Promise<Queued[]> {
  return ctx.db.tenant({ projectId: key.projectId, keyKind: 'secret' }, (tx) => queueAll(ctx, tx, key, mails));
}

/** The node's mail group commit, built once at start-up (src/boot.ts). */
export function createMailGroups(ctx: AppContext): MailGroups {
  return new Coalescer((key, mails) => commitGroup(ctx, key, mails), (k) => `${k.projectId} ${k.period} ${k.limit}`, MAX_GROUP);
}

const keyOf = (item: GroupItem): GroupKey => ({ projectId: item.projectId, period: item.mail.period, limit: item.limit });

/** Queues one message for a project, in the next group commit of that project. */
export async function queueInGroup(ctx: AppContext, item: GroupItem): Promise<Queued> {
  try {
    return await ctx.mailGroups.submit(keyOf(item), item.mail);
  } catch (err) {
    // Only a send that alone does not fit gets here (a group that does not fit is retried one by one).
    throw err instanceof QuotaShort ? mailQuotaExceeded(item.limit, ctx.clock.now()) : err;
  }
}

/**
 * Queues one message in the caller's transaction `tx` instead of a group: a send with an
 * Idempotency-Key, whose key must commit with its MailLog and job, in a transaction of its own.
 */
export async function queueInTransaction(ctx: AppContext, tx: Tx, item: GroupItem): Promise<Queued> {
  try {
    return (await queueAll(ctx, tx, keyOf(item), [item.mail]))[0]!;
  } catch (err) {
    throw err instanceof QuotaShort ? mailQuotaExceeded(item.limit, ctx.clock.now()) : err;
  }
}
