/**
 * The system mailer (ctx.mailer, see Mailer in src/context.ts): auth OTPs and operator mails
 * go through the same queue, worker and providers as /api/mail/send (the dev outbox when no
 * provider is configured), with a MailLog tagged by purpose, and no quota slot.
 */
import type { AppContext, Mailer, SystemMail } from '../../context.js';
import type { Tx } from '../../db/pool.js';
import { enqueueMails } from './enqueue.js';
import { scoped } from './queries.js';
import { senderKindFor } from './providers/select.js';
import { currentPeriod } from './quota.js';

async function sendSystemMail(ctx: AppContext, mail: SystemMail, tx?: Tx): Promise<void> {
  const project = mail.projectId ? await ctx.projects.byId(mail.projectId) : null;
  if (mail.projectId && !project) throw new Error(`system mail for unknown project ${mail.projectId}`);
  const enqueue = (db: Tx) =>
    enqueueMails(ctx, db, [{
      projectId: mail.projectId,
      to: [mail.to],
      subject: mail.subject,
      html: mail.html,
      text: mail.text,
      provider: senderKindFor(ctx, project),
      tag: mail.tag,
      charged: false,
      period: currentPeriod(ctx),
    }]);
  await (tx ? enqueue(tx) : scoped(ctx, mail.projectId, enqueue));
}

export function createMailer(ctx: AppContext): Mailer {
  return { sendSystemMail: (mail, tx) => sendSystemMail(ctx, mail, tx) };
}
