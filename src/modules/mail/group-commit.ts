/**
 * Group commit for /api/mail/send. Sends of one project that arrive while its previous
 * transaction is still committing wait and then go in together: ONE tenant transaction
 * writes all their MailLogs and jobs and reserves all their slots with one guarded update.
 * A lone request is never delayed (it commits at once). Without this, every send would
 * serialise on the project's counter row and on the queue's NOTIFY for a full commit.
 *
 * Exactness is kept: if the group does not fit in what is left of the quota, the whole
 * transaction rolls back and its requests are retried one by one (each reserving 1), so
 * exactly the remaining slots are handed out.
 */
import type { AppContext } from '../../context.js';
import { reserve } from '../../lib/quota.js';
import { enqueueMails, type QueuedMail } from './enqueue.js';
import { mailQuotaExceeded } from './errors.js';
import { mailCounter } from './quota.js';

const MAX_GROUP = 200;

export interface GroupItem {
  projectId: string;
  limit: number;
  mail: QueuedMail;
}

export interface Queued {
  jobId: string;
  monthlyUsage: number;
}

interface Waiter {
  item: GroupItem;
  resolve(r: Queued): void;
  reject(e: unknown): void;
}

class QuotaShort extends Error {}

const lanes = new WeakMap<AppContext, Map<string, Waiter[]>>();

async function commitGroup(ctx: AppContext, group: Waiter[]): Promise<Queued[]> {
  const { projectId, limit, mail } = group[0]!.item;
  return ctx.db.tenant({ projectId, keyKind: 'secret' }, async (tx) => {
    const queued = await enqueueMails(ctx, tx, group.map((w) => w.item.mail));
    const used = await reserve(tx, mailCounter(projectId, mail.period), group.length, limit);
    if (used === null) throw new QuotaShort();
    return queued.map((q, i) => ({ jobId: q.jobId, monthlyUsage: used - group.length + i + 1 }));
  });
}

async function flush(ctx: AppContext, group: Waiter[]): Promise<void> {
  try {
    const results = await commitGroup(ctx, group);
    group.forEach((w, i) => w.resolve(results[i]!));
  } catch (err) {
    if (group.length > 1) {
      for (const w of group) await flush(ctx, [w]);
      return;
    }
    const w = group[0]!;
    w.reject(err instanceof QuotaShort ? mailQuotaExceeded(w.item.limit, ctx.clock.now()) : err);
  }
}

async function drain(ctx: AppContext, lanesOfCtx: Map<string, Waiter[]>, key: string): Promise<void> {
  for (;;) {
    const lane = lanesOfCtx.get(key)!;
    const group = lane.splice(0, MAX_GROUP);
    if (group.length === 0) {
      lanesOfCtx.delete(key);
      return;
    }
    await flush(ctx, group);
  }
}

/** Queues one message for a project, in the next group commit of that project. */
export function queueInGroup(ctx: AppContext, item: GroupItem): Promise<Queued> {
  let byKey = lanes.get(ctx);
  if (!byKey) lanes.set(ctx, (byKey = new Map()));
  const key = `${item.projectId} ${item.mail.period} ${item.limit}`;
  return new Promise<Queued>((resolve, reject) => {
    const lane = byKey.get(key);
    if (lane) return void lane.push({ item, resolve, reject });
    byKey.set(key, [{ item, resolve, reject }]);
    void drain(ctx, byKey, key);
  });
}
