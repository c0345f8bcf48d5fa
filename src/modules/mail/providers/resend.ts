/**
 * The Resend adapter, through the official `resend` SDK. The API base URL comes from
 * config.mail.resendBaseUrl and is passed to the SDK's constructor option `baseUrl` (the SDK
 * would otherwise read process.env.RESEND_BASE_URL itself; config.ts stays the only reader).
 * Every call carries a timeout; a timeout or network error is a transient failure.
 */
import { LRUCache } from 'lru-cache';
import { Resend } from 'resend';
import type { MailProviderKind } from '../tables.js';
import { failure, type BatchItemResult, type MailProvider, type OutgoingMail, type ProviderResult } from './types.js';

const TIMEOUT_MS = 10_000;
/** One SDK client per (base URL, key): projects with their own keys reuse theirs. */
const clients = new LRUCache<string, Resend>({ max: 1000 });

type SdkResponse<T> = { data: T; error: null } | { data: null; error: { message: string; statusCode: number | null } };

function clientFor(apiKey: string, baseUrl: string | undefined): Resend {
  const cacheKey = `${baseUrl ?? ''} ${apiKey}`;
  let client = clients.get(cacheKey);
  if (!client) {
    client = new Resend(apiKey, baseUrl ? { baseUrl } : undefined);
    clients.set(cacheKey, client);
  }
  return client;
}

function toResult<T>(res: SdkResponse<T>): ProviderResult<T> {
  if (res.error) return failure(res.error.statusCode ?? null, res.error.message);
  return { ok: true, data: res.data as T };
}

const timeout = () => AbortSignal.timeout(TIMEOUT_MS);

function toApi(mail: OutgoingMail) {
  const base = { from: mail.from, to: mail.to, subject: mail.subject };
  if (mail.html !== undefined) return { ...base, html: mail.html, ...(mail.text !== undefined ? { text: mail.text } : {}) };
  return { ...base, text: mail.text ?? '' };
}

export class ResendProvider implements MailProvider {
  private readonly client: Resend;

  constructor(readonly kind: Exclude<MailProviderKind, 'outbox'>, apiKey: string, baseUrl?: string) {
    this.client = clientFor(apiKey, baseUrl);
  }

  async send(mail: OutgoingMail, idempotencyKey: string): Promise<ProviderResult<{ id: string }>> {
    return toResult(await this.client.emails.send(toApi(mail), { idempotencyKey, signal: timeout() }));
  }

  async sendBatch(mails: OutgoingMail[], idempotencyKey: string): Promise<ProviderResult<BatchItemResult[]>> {
    const res = await this.client.batch.send(mails.map(toApi), { idempotencyKey, batchValidation: 'permissive', signal: timeout() });
    if (res.error) return failure(res.error.statusCode ?? null, res.error.message);
    const errors = new Map((res.data.errors ?? []).map((e) => [e.index, e.message]));
    const ids = [...(res.data.data ?? [])];
    return { ok: true, data: mails.map((_, i) => (errors.has(i) ? { error: errors.get(i)! } : { id: ids.shift()?.id ?? '' })) };
  }

  async getEmail(id: string): Promise<ProviderResult<Record<string, unknown>>> {
    return toResult((await this.client.emails.get(id, { signal: timeout() })) as SdkResponse<Record<string, unknown>>);
  }

  // Audiences, contacts and broadcasts: only with a project's own key (see gating.ts).

  async listAudiences() {
    return toResult(await this.client.audiences.list({}, { signal: timeout() }));
  }
  async createAudience(name: string) {
    return toResult(await this.client.audiences.create({ name }, { signal: timeout() }));
  }
  async removeAudience(id: string) {
    return toResult(await this.client.audiences.remove(id, { signal: timeout() }));
  }
  async listContacts(audienceId: string) {
    return toResult(await this.client.contacts.list({ audienceId }, { signal: timeout() }));
  }
  async createContact(audienceId: string, c: ContactInput & { email: string }) {
    return toResult(await this.client.contacts.create({ audienceId, ...c }, { signal: timeout() }));
  }
  async updateContact(audienceId: string, id: string, c: Omit<ContactInput, 'email'>) {
    return toResult(await this.client.contacts.update({ audienceId, id, ...c }, { signal: timeout() }));
  }
  async removeContact(audienceId: string, id: string) {
    return toResult(await this.client.contacts.remove({ audienceId, id }, { signal: timeout() }));
  }
  async createBroadcast(b: { audienceId: string; from: string; subject: string; html: string; name?: string }) {
    return toResult(await this.client.broadcasts.create(b, { signal: timeout() }));
  }
  async sendBroadcast(id: string, scheduledAt?: string) {
    return toResult(await this.client.broadcasts.send(id, scheduledAt ? { scheduledAt } : undefined, { signal: timeout() }));
  }
  async listBroadcasts() {
    return toResult(await this.client.broadcasts.list({}, { signal: timeout() }));
  }
  async getBroadcast(id: string) {
    return toResult(await this.client.broadcasts.get(id, { signal: timeout() }));
  }
  async removeBroadcast(id: string) {
    return toResult(await this.client.broadcasts.remove(id, { signal: timeout() }));
  }
}

export interface ContactInput {
  email?: string;
  firstName?: string;
  lastName?: string;
  unsubscribed?: boolean;
}
