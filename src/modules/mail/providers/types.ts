/**
 * The seam between the mail pipeline and a mail provider. One adapter per provider:
 * resend.ts (the real Resend API through the `resend` SDK) and outbox.ts (the dev outbox).
 * Adapters never throw for provider failures; they return a ProviderFailure saying whether
 * a retry may help (network errors, timeouts, 429, 5xx) or not (any other 4xx).
 */
import type { MailProviderKind } from '../tables.js';

export interface OutgoingMail {
  from: string;
  to: string[];
  subject: string;
  html?: string;
  text?: string;
}

export interface ProviderFailure {
  ok: false;
  /** The provider's HTTP status; null when it never answered (network, timeout). */
  status: number | null;
  message: string;
  transient: boolean;
}

export type ProviderResult<T> = { ok: true; data: T } | ProviderFailure;

/** One result per batch item, in request order. */
export type BatchItemResult = { id: string } | { error: string };

export interface MailProvider {
  readonly kind: MailProviderKind;
  /** Sends one message; the same idempotency key never sends twice (provider dedupes). */
  send(mail: OutgoingMail, idempotencyKey: string): Promise<ProviderResult<{ id: string }>>;
  /** Sends up to 100 independent messages in one call. */
  sendBatch(mails: OutgoingMail[], idempotencyKey: string): Promise<ProviderResult<BatchItemResult[]>>;
  /** The provider's live view of one message (Resend: GET /emails/:id). */
  getEmail(id: string): Promise<ProviderResult<Record<string, unknown>>>;
  /** Called once the log records the provider id (the outbox simulates delivery events here). */
  afterAccepted?(providerEmailId: string): Promise<void>;
}

export function isTransient(status: number | null): boolean {
  return status === null || status === 408 || status === 409 || status === 429 || status >= 500;
}

export function failure(status: number | null, message: string): ProviderFailure {
  return { ok: false, status, message, transient: isTransient(status) };
}
