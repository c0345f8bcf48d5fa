/** The system mailer (ctx.mailer). Owned by the mail domain; see Mailer in src/context.ts. */
import type { AppContext, Mailer } from '../../context.js';

export function createMailer(ctx: AppContext): Mailer {
  return {
    async sendSystemMail(mail) {
      // Replaced by the mail domain's pipeline (queued send / dev outbox).
      ctx.log.info({ tag: mail.tag, projectId: mail.projectId }, 'system mail not sent: mail pipeline not wired');
    },
  };
}
