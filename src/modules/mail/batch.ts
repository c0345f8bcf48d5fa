/**
 * POST /api/mail/send-batch, without HTTP: 1–100 independent items sent straight to the
 * provider (not queued). All slots are reserved before the call; the slots of items the
 * provider refused (or all of them, when the call fails) are refunded. Accepted items get
 * MailLogs (`sent`, with their provider id), written with one statement.
 */
import type { AppContext } from '../../context.js';
import { sha256Base64url } from '../../lib/crypto.js';
import { AppError } from '../../lib/errors.js';
import { objectId } from '../../lib/ids.js';
import { refund, reserve } from '../../lib/quota-queries.js';
import { claimAhead, settleAhead, type Answer, type KeyedRequest, type Response } from '../idempotency/service.js';
import type { ProjectRecord } from '../projects/cache.js';
import { checkContent, recipients } from './content.js';
import { MailErrors, mailQuotaExceeded, providerError } from './errors.js';
import { insertLogs } from './queries.js';
import { senderFor } from './providers/select.js';
import type { BatchItemResult, OutgoingMail } from './providers/types.js';
import { currentPeriod, mailCounter, monthlyLimit } from './quota.js';

export const MAX_BATCH = 100;

export interface BatchItem {
  to: string | string[];
  subject: string;
  html?: string;
  text?: string;
}

function toMails(items: BatchItem[], from: string): OutgoingMail[] {
  if (items.length < 1 || items.length > MAX_BATCH) throw MailErrors.mail_invalid_batch();
  return items.map((item, i) => {
    try {
      const to = recipients(item.to);
      checkContent(item.subject, item.html, item.text);
      return { from, to, subject: item.subject, html: item.html || undefined, text: item.text || undefined };
    } catch (err) {
      const why = err instanceof AppError ? err.message : 'invalid item';
      throw MailErrors.mail_invalid_batch(`Invalid batch payload: item ${i}: ${why}`);
    }
  });
}

/** `providerKey`: the provider's idempotency key for the call (the same key never sends twice). */
export async function sendBatch(ctx: AppContext, project: ProjectRecord, items: BatchItem[], providerKey = objectId()): Promise<BatchItemResult[]> {
  const sender = senderFor(ctx, project);
  const mails = toMails(items, sender.from);
  const limit = monthlyLimit(ctx, project.plan, sender.kind === 'byok');
  const counter = mailCounter(project.id, currentPeriod(ctx));
  const scope = { projectId: project.id, keyKind: 'secret' as const };
  const used = await ctx.db.read(scope, (db) => reserve(db, counter, mails.length, limit));
  if (used === null) throw mailQuotaExceeded(limit, ctx.clock.now());

  const res = await sender.provider.sendBatch(mails, providerKey).catch((err: Error) => ({ ok: false as const, status: null, message: err.message }));
  if (!res.ok) {
    await ctx.db.read(scope, (db) => refund(db, counter, mails.length));
    throw providerError(res.status, res.message);
  }
  const now = ctx.clock.now();
  const logs = res.data.flatMap((r, i) => {
    if (!('id' in r)) return [];
    const m = mails[i]!;
    return [{
      id: objectId(now.getTime()), projectId: project.id, jobId: null, to: m.to.join(', '), subject: m.subject,
      provider: sender.kind, charged: true, sentAt: now, providerEmailId: r.id, status: 'sent' as const,
    }];
  });
  const refused = res.data.length - logs.length;
  await ctx.db.tenant(scope, async (tx) => {
    // Mails logged already were charged already: a retry whose provider call replayed an
    // earlier one (its process died before storing the answer) must not count them twice.
    const logged = logs.length > 0 ? await insertLogs(tx, logs) : 0;
    const uncharged = refused + logs.length - logged;
    if (uncharged > 0) await refund(tx, counter, uncharged);
  });
  for (const r of res.data) if ('id' in r) await sender.provider.afterAccepted?.(r.id);
  return res.data;
}

/**
 * The batch once per Idempotency-Key. The provider call cannot join a transaction, so the key is
 * claimed (committed) first: a concurrent request with it gets 409 `idempotency_key_in_use`.
 * The answer is stored after the call; a failed batch gives the key back. The provider's own
 * idempotency key is derived from it, so a retry after a call whose answer was lost (a
 * timeout) is not sent twice by the provider either. A claim left unanswered (its node died
 * mid-call) is taken over by one retry after CLAIM_LEASE_MS.
 */
export async function sendBatchOnce(
  ctx: AppContext, project: ProjectRecord, items: BatchItem[], keyed: KeyedRequest, respond: (r: BatchItemResult[]) => Response,
): Promise<Answer> {
  const scope = { projectId: project.id, keyKind: 'secret' as const };
  const { answer: prior, claimedAt } = await claimAhead(ctx, scope, keyed);
  if (prior) return prior;
  let results: BatchItemResult[];
  try {
    // With the fingerprint: a key reused for another batch once expired here is another key there too.
    const providerKey = `batch-${sha256Base64url(`${project.id}\0${keyed.key}\0${keyed.fingerprint}`)}`;
    results = await sendBatch(ctx, project, items, providerKey);
  } catch (err) {
    await settleAhead(ctx, scope, keyed, claimedAt, null);
    throw err;
  }
  return (await settleAhead(ctx, scope, keyed, claimedAt, respond(results)))!;
}
