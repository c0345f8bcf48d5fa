/** Shared pieces of the mail tests: env with the fake Resend, project keys, webhooks, jobs. */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Webhook } from 'svix';
import { encrypt } from '../../../src/lib/crypto.js';
import { usage } from '../../../src/lib/quota-queries.js';
import { currentPeriod, mailCounter } from '../../../src/modules/mail/quota.js';
import { createTestEnv, type TestEnv } from '../../helpers/context.js';
import { drainJobs } from '../../helpers/jobs.js';
import type { TestProject } from '../../helpers/fixtures.js';
import { startFakeResend, type FakeResend } from '../../fakes/resend.js';

export const PLATFORM_KEY = 're_platform_key';
export const PLATFORM_SECRET = 'whsec_' + Buffer.from('platform-webhook-secret-0123456789').toString('base64');
export const PROJECT_SECRET = 'whsec_' + Buffer.from('project-webhook-secret-9876543210').toString('base64');

export function mailEnv(fake: FakeResend | null, extra: Record<string, string> = {}): Promise<TestEnv> {
  const provider: Record<string, string> = fake ? { RESEND_API_KEY: PLATFORM_KEY, RESEND_BASE_URL: fake.url } : {};
  return createTestEnv({ MAIL_WEBHOOK_SECRET: PLATFORM_SECRET, ...provider, ...extra });
}

/** A fresh fake Resend and an env whose platform key points at it (the usual file setup). */
export async function startMailTest(extra: Record<string, string> = {}): Promise<{ fake: FakeResend; env: TestEnv }> {
  const fake = await startFakeResend();
  return { fake, env: await mailEnv(fake, extra) };
}

export async function stopMailTest(env: TestEnv, fake: FakeResend): Promise<void> {
  await env.close();
  await fake.close();
}

/** What the projects domain's PATCH stores: the own Resend key, encrypted, in secrets.mailApiKey. */
export async function setProjectMailKey(env: TestEnv, projectId: string, key: string | null, from?: string): Promise<void> {
  const secret = key === null ? sql`secrets - 'mailApiKey'` : sql`secrets || ${JSON.stringify({ mailApiKey: encrypt(env.config.encryptionKey, key) })}::jsonb`;
  const settings = from ? sql`settings || ${JSON.stringify({ providerFromEmail: from })}::jsonb` : sql`settings`;
  await env.ctx.db.admin.updateTable('projects').set({ secrets: secret as never, settings: settings as never }).where('id', '=', projectId).execute();
  await env.ctx.bus.publish({ type: 'project_changed', id: projectId });
}

export function send(env: TestEnv, p: TestProject, body: unknown, headers: Record<string, string> = p.sk) {
  return env.app.inject({ method: 'POST', url: '/api/mail/send', headers, payload: body as Record<string, unknown> });
}

/** Makes every waiting job (e.g. a retry scheduled with backoff) due now, then runs them. */
export async function runDueJobs(env: TestEnv, rounds = 1): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await sql`UPDATE graphile_worker._private_jobs SET run_at = now() WHERE locked_at IS NULL`.execute(env.ctx.db.admin);
    await drainJobs(env);
  }
}

export async function logsOf(env: TestEnv, projectId: string) {
  return env.ctx.db.admin.selectFrom('mail_logs').selectAll().where('project_id', '=', projectId).orderBy('created_at').execute();
}

/** The project's mail slots used this (app clock) month. */
export function mailUsage(env: TestEnv, projectId: string): Promise<number> {
  return usage(env.ctx.db.admin, mailCounter(projectId, currentPeriod(env.ctx)));
}

/** Sends one message and runs the worker: the resulting log's provider id and id. */
export async function sentMail(env: TestEnv, p: TestProject): Promise<{ emailId: string; logId: string }> {
  await send(env, p, { to: 'a@example.com', subject: 'e', text: 't' });
  await drainJobs(env);
  const log = (await logsOf(env, p.id)).at(-1)!;
  return { emailId: log.provider_email_id!, logId: log.id };
}

export interface SignedEvent {
  type: string;
  emailId: string;
  createdAt?: Date;
  id?: string;
  secret?: string;
  timestamp?: Date;
  /** Sign this body instead of the event built from the fields above. */
  body?: string;
}

/** A webhook request exactly as Resend (Svix) would sign it. */
export function signedEvent(e: SignedEvent) {
  const id = e.id ?? `msg_${randomUUID()}`;
  const body = e.body ?? JSON.stringify({ type: e.type, created_at: (e.createdAt ?? new Date()).toISOString(), data: { email_id: e.emailId } });
  const ts = e.timestamp ?? new Date();
  const signature = new Webhook(e.secret ?? PLATFORM_SECRET).sign(id, ts, body);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'svix-id': id,
      'svix-timestamp': String(Math.floor(ts.getTime() / 1000)),
      'svix-signature': signature,
    },
  };
}

export function postWebhook(env: TestEnv, req: { body: string; headers: Record<string, string> }, query = '') {
  return env.app.inject({ method: 'POST', url: `/api/mail/webhook${query}`, headers: req.headers, payload: req.body });
}
