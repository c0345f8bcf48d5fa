/**
 * POST /api/mail/send, without HTTP: resolve the content, then in one tenant transaction
 * write the MailLog and the job and reserve the quota slot (group-commit.ts batches
 * concurrent sends of a project into one such transaction). A full quota rolls back.
 */
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../projects/cache.js';
import { resolveContent, type SendInput, type TemplateUsed } from './content.js';
import { queueInGroup } from './group-commit.js';
import { senderKindFor } from './providers/select.js';
import { currentPeriod, monthlyLimit } from './quota.js';

export interface SendResult {
  id: string;
  provider: 'byok' | 'default';
  monthlyUsage: number;
  monthlyLimit: number;
  templateUsed?: TemplateUsed;
}

export async function sendMail(ctx: AppContext, project: ProjectRecord, input: SendInput): Promise<SendResult> {
  const content = await resolveContent(ctx, project, input);
  const kind = senderKindFor(ctx, project);
  const limit = monthlyLimit(ctx, project.plan, kind === 'byok');
  const queued = await queueInGroup(ctx, {
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
  });
  const result: SendResult = {
    id: queued.jobId,
    provider: kind === 'byok' ? 'byok' : 'default',
    monthlyUsage: queued.monthlyUsage,
    monthlyLimit: limit,
  };
  if (content.templateUsed) result.templateUsed = content.templateUsed;
  return result;
}
