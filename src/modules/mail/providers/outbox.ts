/**
 * The dev outbox: the provider used when no Resend key is configured (the embedded default).
 * Messages are stored in mail_outbox for operators to read (GET …/mail/outbox), and their
 * `sent` → `delivered` events are simulated through the same status machine as webhooks.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AppContext } from '../../../context.js';
import { isObjectId } from '../../../lib/ids.js';
import { scopedRead } from '../queries.js';
import { ingestEvent } from '../status.js';
import { failure, type BatchItemResult, type MailProvider, type OutgoingMail, type ProviderResult } from './types.js';

export class OutboxProvider implements MailProvider {
  readonly kind = 'outbox' as const;

  constructor(private readonly ctx: AppContext, private readonly projectId: string | null) {}

  async send(mail: OutgoingMail, idempotencyKey: string): Promise<ProviderResult<{ id: string }>> {
    const { rows } = await scopedRead(this.ctx, this.projectId, (db) => sql<{ id: string }>`
      INSERT INTO mail_outbox (id, project_id, mail_log_id, idempotency_key, "from", "to", subject, html, text, created_at)
      VALUES (${randomUUID()}, ${this.projectId}, ${isObjectId(idempotencyKey) ? idempotencyKey : null}, ${idempotencyKey},
              ${mail.from}, ${JSON.stringify(mail.to)}::jsonb, ${mail.subject}, ${mail.html ?? null}, ${mail.text ?? null},
              ${this.ctx.clock.now()})
      ON CONFLICT (idempotency_key) DO UPDATE SET idempotency_key = excluded.idempotency_key
      RETURNING id::text`.execute(db));
    return { ok: true, data: { id: rows[0]!.id } };
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
      db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst(),
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

  /** Simulated provider events: `email.sent`, then `email.delivered`, like a webhook would. */
  async afterAccepted(providerEmailId: string): Promise<void> {
    const now = this.ctx.clock.now();
    for (const [i, type] of (['email.sent', 'email.delivered'] as const).entries()) {
      const at = new Date(now.getTime() + i);
      await ingestEvent(this.ctx.db.admin, { scope: '', eventId: `outbox_${providerEmailId}_${type}`, emailId: providerEmailId, type, at });
    }
    await scopedRead(this.ctx, this.projectId, (db) =>
      db.updateTable('mail_outbox').set({ last_event: 'delivered' }).where('id', '=', providerEmailId).execute(),
    );
  }
}
