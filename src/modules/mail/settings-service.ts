/**
 * Dashboard mail settings: the per-project webhook secret (own-key projects), stored
 * encrypted in projects.secrets.mailWebhookSecret, and the dev outbox listing.
 */
import { Webhook } from 'svix';
import type { AppContext } from '../../context.js';
import { encrypt } from '../../lib/crypto.js';
import { MailErrors } from './errors.js';
import { setProjectSecret } from '../projects/queries.js';
import { listOutbox } from './queries.js';

export async function setWebhookSecret(ctx: AppContext, projectId: string, secret: string | null): Promise<boolean> {
  if (secret !== null) {
    if (!/^whsec_[A-Za-z0-9+/=]+$/.test(secret)) throw MailErrors.mail_webhook_secret_invalid();
    try {
      new Webhook(secret);
    } catch {
      throw MailErrors.mail_webhook_secret_invalid();
    }
  }
  const sealed = secret === null ? null : encrypt(ctx.config.encryptionKey, secret);
  await setProjectSecret(ctx.db.admin, projectId, 'mailWebhookSecret', sealed, ctx.clock.now());
  await ctx.bus.publish({ type: 'project_changed', id: projectId });
  return secret !== null;
}

export async function outboxMessages(ctx: AppContext, projectId: string) {
  const rows = await ctx.db.read({ projectId, keyKind: 'operator' }, (db) => listOutbox(db, projectId, 50));
  return rows.map((r) => ({
    id: r.id,
    from: r.from,
    to: r.to,
    subject: r.subject,
    html: r.html,
    text: r.text,
    lastEvent: r.last_event,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}
