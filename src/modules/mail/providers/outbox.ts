/**
 * The dev outbox: the provider used when no Resend key is configured (the embedded default).
 * Messages are stored in mail_outbox for operators to read (GET …/mail/outbox), and their
 * `sent` → `delivered` events are simulated through the same status machine as webhooks.
 */
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../../../context.js';
import { scopedRead } from '../queries.js';
import { recordAndApplyNewest } from '../status-queries.js';
import { failure, type BatchItemResult, type MailProvider, type OutgoingMail, type ProviderResult } from './types.js';
import { findOutboxMessage, insertOutboxMessage } from '../queries.js';

export class OutboxProvider implements MailProvider {
  readonly kind = 'outbox' as const;

  constructor(private readonly ctx: AppContext, private readonly projectId: string | null) {}

  async send(mail: OutgoingMail, idempotencyKey: string): Promise<ProviderResult<{ id: string }>> {
    const id = await scopedRead(this.ctx, this.projectId, (db) =>
      insertOutboxMessage(db, { id: randomUUID(), projectId: this.projectId, idempotencyKey, mail, now: this.ctx.clock.now() }),
    );
    return { ok: true, data: { id } };
  }

  async sendBatch(mails: OutgoingMail[], idempotencyKey: string): Promise<ProviderResult<BatchItemResult[]>> {
    const out: BatchItemResult[] = [];
    for (const [i, mail] of mails.entries()) {
      const r = await this.send(mail, `${idempotencyKey}:${i}`);
      out.push(r.ok ? r.data : { error: r.message });
    }
    return { ok: true, data: out };
  }

  async getEmail(id: string): Promise<ProviderResult<Record<string, unknown>>> {
    const row = await scopedRead(this.ctx, this.projectId, (db) =>
      findOutboxMessage(db, id),
    );
    if (!row) return failure(404, 'Email not found');
    return {
      ok: true,
      data: {
        object: 'email',
        id: row.id,
        from: row.from,
        to: row.to,
        subject: row.subject,
        last_event: row.last_event,
        created_at: new Date(row.created_at).toISOString(),
      },
    };
  }

  /**
   * Simulated provider events, `email.sent` then `email.delivered`, as a webhook would bring
   * them, recorded and applied in one statement (the message itself is stored delivered).
   */
  async afterAccepted(providerEmailId: string): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    const events = (['email.sent', 'email.delivered'] as const).map((type, i) => (
      { scope: '', eventId: `outbox_${providerEmailId}_${type}`, emailId: providerEmailId, type, at: new Date(now + i) }
    ));
    await recordAndApplyNewest(this.ctx.db.admin, events);
  }
}
