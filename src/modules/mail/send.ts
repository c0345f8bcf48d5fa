/**
 * POST /api/mail/send, without HTTP: resolve the content, then in one tenant transaction
 * write the MailLog and the job and reserve the quota slot (group-commit.ts batches
 * concurrent sends of a project into one such transaction). A full quota rolls back.
 * A send with an Idempotency-Key runs in a transaction of its own that also stores the key and
 * the answer (../idempotency/service.ts): a retry of a send that committed queues nothing.
 */
import type { AppContext } from '../../context.js';
import { ok } from '../../lib/envelope.js';
import { once, type Answer, type KeyedRequest, type Response } from '../idempotency/service.js';
import type { ProjectRecord } from '../projects/cache.js';
import { resolveContent, type SendInput, type TemplateUsed } from './content.js';
import { queueInGroup, queueInTransaction, type GroupItem, type Queued } from './group-commit.js';
import { senderKindFor } from './providers/select.js';
import { currentPeriod, monthlyLimit } from './quota.js';

export interface SendResult {
  id: string;
  provider: 'byok' | 'default';
  monthlyUsage: number;
  monthlyLimit: number;
  templateUsed?: TemplateUsed;
}

/** What POST /api/mail/send answers (and an idempotency key stores) for a queued message. */
export const queuedResponse = (r: SendResult) => ({ status: 200, body: ok(r, 'Mail queued successfully.') }) satisfies Response;

/** The message to queue and how to answer once it is queued. */
async function prepare(ctx: AppContext, project: ProjectRecord, input: SendInput) {
  const content = await resolveContent(ctx, project, input);
  const kind = senderKindFor(ctx, project);
  const limit = monthlyLimit(ctx, project.plan, kind === 'byok');
  const item: GroupItem = {
    projectId: project.id,
    limit,
    mail: {
      projectId: project.id,
      to: content.to,
      subject: content.subject,
      html: content.html,
      text: content.text,
      provider: kind,
      templateUsed: content.templateUsed?.key,
      charged: true,
      period: currentPeriod(ctx),
    },
  };
  const resultOf = (queued: Queued): SendResult => {
    const result: SendResult = {
      id: queued.jobId,
      provider: kind === 'byok' ? 'byok' : 'default',
      monthlyUsage: queued.monthlyUsage,
      monthlyLimit: limit,
    };
    if (content.templateUsed) result.templateUsed = content.templateUsed;
    return result;
  };
  return { item, resultOf };
}

export async function sendMail(ctx: AppContext, project: ProjectRecord, input: SendInput): Promise<SendResult> {
  const { item, resultOf } = await prepare(ctx, project, input);
  return resultOf(await queueInGroup(ctx, item));
}

/** The send once per key: its MailLog, job, quota slot and answer (`respond`) commit together. */
export async function sendMailOnce(
  ctx: AppContext, project: ProjectRecord, input: SendInput, keyed: KeyedRequest, respond: (r: SendResult) => Response,
): Promise<Answer> {
  const { item, resultOf } = await prepare(ctx, project, input);
  return ctx.db.tenant({ projectId: project.id, keyKind: 'secret' }, (tx) =>
    once(ctx, tx, project.id, keyed, async () => respond(resultOf(await queueInTransaction(ctx, tx, item)))),
  );
}
