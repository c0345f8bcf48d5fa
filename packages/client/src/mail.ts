/**
 * `@plinth/client/mail`: send mail through the project's mail settings (docs/mail.md). The mail
 * routes take the secret key, so this is for servers. Sends carry an Idempotency-Key: a retry
 * after a lost answer never sends twice.
 */
import type { PlinthClient } from './index.js';
import type { SchemaMap, WriteOptions } from './data.js';

export type MailMessage =
  | { to: string | string[]; subject: string; html?: string; text?: string; from?: string }
  | { to: string | string[]; templateId: string; variables?: Record<string, unknown>; from?: string }
  | { to: string | string[]; templateName: string; variables?: Record<string, unknown>; from?: string };

export interface MailSent {
  id: string;
  provider: 'byok' | 'default';
  monthlyUsage: number;
  monthlyLimit: number;
  templateUsed?: string;
}

export class Mail {
  constructor(private readonly client: PlinthClient) {}

  /** Queues one message (direct, or from a template with variables). */
  send(message: MailMessage, opts: WriteOptions = {}): Promise<MailSent> {
    return this.client.request({ method: 'POST', path: '/api/mail/send', body: message, idempotent: true, ...opts });
  }

  /** 1–100 direct messages sent at once; one `{id}` or `{error}` per message. */
  sendBatch(messages: Array<{ to: string; subject: string; html?: string; text?: string }>, opts: WriteOptions = {}): Promise<unknown> {
    return this.client.request({ method: 'POST', path: '/api/mail/send-batch', body: messages, idempotent: true, ...opts });
  }
}

export function mail<S extends SchemaMap>(client: PlinthClient<S>): Mail {
  return new Mail(client as unknown as PlinthClient);
}
