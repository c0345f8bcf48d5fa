/**
 * Inbound delivery events (POST /api/mail/webhook). The raw body is verified with the svix
 * library before it is parsed. The secret: MAIL_WEBHOOK_SECRET for mail sent with the
 * platform key; a project that sends with its own Resend key points its Resend webhook at
 * `/api/mail/webhook?projectId=<id>` and stores that endpoint's secret in the dashboard, and
 * events verified with it only touch that project's own-key logs.
 *
 * Tolerance: svix checks ±5 minutes against the wall clock (not configurable); we check the
 * same window against ctx.clock as well, so the rule is testable and follows the app's clock.
 */
import { Webhook } from 'svix';
import type { AppContext } from '../../context.js';
import { decrypt } from '../../lib/crypto.js';
import { isObjectId } from '../../lib/ids.js';
import { EVENT_EFFECTS, ingestEvent } from './status-queries.js';

export const TOLERANCE_SECONDS = 5 * 60;

export interface WebhookAnswer {
  status: 200 | 400;
  body: { success: boolean; message: string };
}

const IGNORED: WebhookAnswer = { status: 200, body: { success: true, message: 'Webhook ignored: no secret configured' } };
const BAD_SIGNATURE: WebhookAnswer = { status: 400, body: { success: false, message: 'Webhook signature verification failed.' } };

async function secretFor(ctx: AppContext, projectId: string | undefined): Promise<string | null> {
  if (projectId === undefined) return ctx.config.mail.webhookSecret ?? null;
  if (!isObjectId(projectId)) return null;
  const project = await ctx.projects.byId(projectId);
  return project ? decrypt(ctx.config.encryptionKey, project.secrets.mailWebhookSecret) : null;
}

function verifier(secret: string): Webhook | null {
  try {
    return new Webhook(secret);
  } catch {
    return null; // a malformed secret counts as "misconfigured": ignored (docs/mail.md)
  }
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string {
  const v = headers[name];
  return typeof v === 'string' ? v : '';
}

interface Payload {
  type?: unknown;
  created_at?: unknown;
  data?: { email_id?: unknown };
}

/** Dates before year 1 are valid in JS but out of timestamptz's range (they were a 500). */
const EARLIEST_EVENT_MS = Date.parse('0001-01-01T00:00:00Z');

/** The event's own time (`created_at`), else the signing time when it is missing or unusable. */
function eventTime(createdAt: unknown, sentAt: number): Date {
  const t = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
  return new Date(Number.isNaN(t) || t < EARLIEST_EVENT_MS ? sentAt : t);
}

export async function handleWebhook(
  ctx: AppContext,
  raw: Buffer,
  headers: Record<string, string | string[] | undefined>,
  projectId?: string,
): Promise<WebhookAnswer> {
  const secret = await secretFor(ctx, projectId);
  const wh = secret ? verifier(secret) : null;
  if (!wh) return IGNORED;
  const svix = { 'svix-id': header(headers, 'svix-id'), 'svix-timestamp': header(headers, 'svix-timestamp'), 'svix-signature': header(headers, 'svix-signature') };
  let payload: Payload | null;
  try {
    payload = wh.verify(raw, svix) as Payload | null; // any signed JSON: null, a number …
  } catch {
    return BAD_SIGNATURE;
  }
  const sentAt = Number(svix['svix-timestamp']) * 1000;
  if (Math.abs(ctx.clock.now().getTime() - sentAt) > TOLERANCE_SECONDS * 1000) return BAD_SIGNATURE;

  const type = typeof payload?.type === 'string' ? payload.type : '';
  const emailId = typeof payload?.data?.email_id === 'string' ? payload.data.email_id : '';
  if (!EVENT_EFFECTS.has(type) || !emailId) return { status: 200, body: { success: true, message: 'Event ignored.' } };
  const at = eventTime(payload?.created_at, sentAt);
  const r = await ingestEvent(ctx.db.admin, { scope: projectId ?? '', eventId: svix['svix-id'], emailId, type, at });
  return { status: 200, body: { success: true, message: r.duplicate ? 'Event already processed.' : 'Event processed.' } };
}
