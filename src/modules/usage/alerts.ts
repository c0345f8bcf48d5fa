/**
 * Usage alerts (docs/dashboard.md "Usage alerts"). The `usage:check_alerts` job (every five
 * minutes, once per schedule for the cluster) reads every project's plan-limited counters and,
 * for projects with thresholds, its last hour in the request log; an alert is due when:
 *
 * - database bytes, file bytes, mail this UTC month or the owner's platform AI sessions this
 *   month pass 80 % or 100 % of the plan's limit: once per threshold per UTC month (a jump
 *   past both sends the 100 % one only);
 * - the share of 5xx answers in the last hour, or its p99 latency, reaches the threshold the
 *   operator set (with at least MIN_REQUESTS requests): again only after the cooldown.
 *
 * Each alert is claimed in usage_alerts_sent in the same transaction that enqueues its mail
 * (the platform mailer, to the project's owner) and its webhook job: a second worker, a job run
 * twice or a restart finds the claim and sends nothing. The webhook is signed by the webhooks'
 * own primitive (Standard Webhooks, src/modules/webhooks/delivery.ts) with the secret shown once
 * when the URL is set; it is retried by graphile-worker when the receiver fails.
 */
import { listMembers } from '../members/queries.js';
import type { Task } from 'graphile-worker';
import type { AppContext } from '../../context.js';
import { decrypt, encrypt } from '../../lib/crypto.js';
import { utcMonth } from '../../lib/clock.js';
import type { OperatorIdentity } from '../operators/auth.js';
import { loadMemberProject } from '../projects/access.js';
import { planOf, type Plan } from '../plans/plans.js';
import { monthlyLimit } from '../mail/quota.js';
import { senderKindFor } from '../mail/providers/select.js';
import { signedHeaders } from '../webhooks/delivery.js';
import { checkEndpointUrl } from '../webhooks/endpoint-url.js';
import { postWebhook } from '../webhooks/sender.js';
import { newSecret } from '../webhooks/service.js';
import {
  alertCandidates,
  alertSettings,
  claimAfterCooldown,
  claimOnce,
  recentRequestStats,
  saveAlertSettings,
  sentAlerts,
  type AlertClaim,
} from './queries.js';

export const ALERT_WEBHOOK_TASK = 'usage:alert_webhook';
/** Plan-limit thresholds, in percent of the limit. */
export const LIMIT_THRESHOLDS = [80, 100] as const;
/** The error rate and p99 need this many requests in the last hour (one failed request is not a 100 % error rate). */
export const MIN_REQUESTS = 20;
const HOUR = 3600_000;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// ---- settings ----

export interface AlertSettingsInput {
  enabled?: boolean;
  errorRatePercent?: number | null;
  p99Ms?: number | null;
  cooldownMinutes?: number;
  webhookUrl?: string | null;
  /** A new webhook secret even though the URL already has one. */
  rotateSecret?: boolean;
}

async function settingsView(ctx: AppContext, projectId: string) {
  const s = await alertSettings(ctx.db.admin, projectId);
  return {
    enabled: s?.enabled ?? true,
    errorRatePercent: s?.error_rate_percent ?? null,
    p99Ms: s?.p99_ms ?? null,
    cooldownMinutes: s?.cooldown_minutes ?? 60,
    webhookUrl: s?.webhook_url ?? null,
  };
}

/** The settings as the audit log snapshots them (no secret, no history). */
export async function alertSettingsOf(ctx: AppContext, projectId: string) {
  return settingsView(ctx, projectId);
}

/** Who an alert is mailed to: the project's owner and admins (docs/teams.md). */
async function alertRecipients(db: Parameters<typeof listMembers>[0], projectId: string): Promise<string[]> {
  return (await listMembers(db, projectId)).filter((m) => m.role === 'owner' || m.role === 'admin').map((m) => m.email);
}

export async function getAlertSettings(ctx: AppContext, operator: OperatorIdentity, projectId: string) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const recent = await sentAlerts(ctx.db.admin, project.id, 50);
  return {
    ...(await settingsView(ctx, project.id)),
    recipients: await alertRecipients(ctx.db.admin, project.id),
    sent: recent.map((r) => ({ alert: r.alert, period: r.period, firedAt: new Date(r.fired_at).toISOString(), detail: r.detail })),
  };
}

/** Changes the given members; a new webhook URL (or `rotateSecret`) returns its secret, once. */
export async function updateAlertSettings(ctx: AppContext, operator: OperatorIdentity, projectId: string, input: AlertSettingsInput) {
  const project = await loadMemberProject(ctx, operator, projectId);
  const current = await alertSettings(ctx.db.admin, project.id);
  const webhookUrl =
    input.webhookUrl === undefined ? (current?.webhook_url ?? null) : input.webhookUrl === null ? null : checkEndpointUrl(input.webhookUrl, ctx.config.webhooks.allowPrivateUrls);
  let secret: string | null = null;
  let stored = current?.webhook_secret ?? null;
  if (webhookUrl === null) stored = null;
  else if (stored === null || input.rotateSecret === true || webhookUrl !== current?.webhook_url) {
    secret = newSecret();
    stored = encrypt(ctx.config.encryptionKey, secret);
  }
  await saveAlertSettings(
    ctx.db.admin,
    project.id,
    {
      enabled: input.enabled ?? current?.enabled ?? true,
      errorRatePercent: input.errorRatePercent === undefined ? (current?.error_rate_percent ?? null) : input.errorRatePercent,
      p99Ms: input.p99Ms === undefined ? (current?.p99_ms ?? null) : input.p99Ms,
      cooldownMinutes: input.cooldownMinutes ?? current?.cooldown_minutes ?? 60,
      webhookUrl,
      webhookSecret: stored,
    },
    ctx.clock.now(),
  );
  return { ...(await settingsView(ctx, project.id)), webhookSecret: secret };
}

// ---- the check ----

type Candidate = Awaited<ReturnType<typeof alertCandidates>>[number];

interface Due {
  claims: AlertClaim[];
  /** The claims that send (the others are claimed quietly: a lower threshold passed at once). */
  sends: AlertClaim;
  cooldownMinutes?: number;
  subject: string;
  text: string;
}

const LIMIT_LABELS: Record<string, string> = {
  database_bytes: 'database size',
  storage_bytes: 'file storage',
  mail_per_month: 'mail this month',
  ai_sessions_per_month: 'AI sessions this month (your account)',
};

function limitAlerts(c: Candidate, plan: Plan, mailLimit: number, now: Date): Due[] {
  const month = utcMonth(now);
  const meters: Array<{ key: string; used: number; limit: number; subjectId: string }> = [
    { key: 'database_bytes', used: Number(c.db_bytes), limit: plan.databaseBytes, subjectId: c.id },
    { key: 'storage_bytes', used: Number(c.storage_bytes), limit: plan.storageBytes, subjectId: c.id },
    { key: 'mail_per_month', used: Number(c.mail), limit: mailLimit, subjectId: c.id },
    // The sessions are the owner's account's, shared by their projects: alerted once per account.
    { key: 'ai_sessions_per_month', used: Number(c.ai_sessions), limit: plan.aiSessionsPerMonth, subjectId: c.owner_id },
  ];
  const due: Due[] = [];
  for (const m of meters) {
    if (m.limit <= 0) continue; // unlimited (-1), or nothing allowed
    const passed = LIMIT_THRESHOLDS.filter((t) => m.used * 100 >= m.limit * t);
    if (passed.length === 0) continue;
    const percent = Math.floor((m.used * 100) / m.limit);
    const claims = passed.map((t) => ({
      subjectId: m.subjectId,
      alert: `${m.key}:${t}`,
      period: month,
      projectId: c.id,
      now,
      detail: { kind: 'limit', metric: m.key, threshold: t, used: m.used, limit: m.limit, percent },
    }));
    const label = LIMIT_LABELS[m.key]!;
    const top = passed[passed.length - 1]!;
    due.push({
      claims,
      sends: claims[claims.length - 1]!,
      subject: top >= 100 ? `${c.name}: ${label} limit reached` : `${c.name}: ${label} at ${top} % of the plan's limit`,
      text: `${c.name} has used ${m.used} of ${m.limit} (${percent} %) for ${label} on the ${c.plan} plan.` +
        (top >= 100 ? ' Work that needs more is refused until usage drops or the plan changes.' : ''),
    });
  }
  return due;
}

async function rateAlerts(ctx: AppContext, c: Candidate, now: Date): Promise<Due[]> {
  if (c.error_rate_percent === null && c.p99_ms === null) return [];
  const stats = await recentRequestStats(ctx.db.admin, c.id, new Date(now.getTime() - HOUR));
  if (stats.requests < MIN_REQUESTS) return [];
  const due: Due[] = [];
  const rate = (stats.errors * 100) / stats.requests;
  if (c.error_rate_percent !== null && rate >= c.error_rate_percent) {
    const claim = { subjectId: c.id, alert: 'error_rate', period: '', projectId: c.id, now, detail: { kind: 'error_rate', percent: Math.round(rate * 10) / 10, threshold: c.error_rate_percent, requests: stats.requests, errors: stats.errors, windowMinutes: 60 } };
    due.push({
      claims: [claim],
      sends: claim,
      cooldownMinutes: c.cooldown_minutes,
      subject: `${c.name}: error rate ${claim.detail.percent} % in the last hour`,
      text: `${stats.errors} of ${stats.requests} requests to ${c.name} in the last hour answered 5xx (${claim.detail.percent} %, your threshold ${c.error_rate_percent} %). The request log in the console shows which.`,
    });
  }
  if (c.p99_ms !== null && stats.p99 !== null && stats.p99 >= c.p99_ms) {
    const p99 = Math.round(stats.p99);
    const claim = { subjectId: c.id, alert: 'p99_latency', period: '', projectId: c.id, now, detail: { kind: 'p99_latency', p99Ms: p99, threshold: c.p99_ms, requests: stats.requests, windowMinutes: 60 } };
    due.push({
      claims: [claim],
      sends: claim,
      cooldownMinutes: c.cooldown_minutes,
      subject: `${c.name}: p99 latency ${p99} ms in the last hour`,
      text: `The slowest 1 % of ${stats.requests} requests to ${c.name} in the last hour took ${p99} ms or more (your threshold ${c.p99_ms} ms).`,
    });
  }
  return due;
}

/** Claims and, when the claim is new, enqueues the mail and the webhook, in one transaction. */
async function fire(ctx: AppContext, c: Candidate, d: Due): Promise<boolean> {
  return ctx.db.admin.transaction().execute(async (tx) => {
    let fresh = false;
    for (const claim of d.claims) {
      const won = d.cooldownMinutes === undefined ? await claimOnce(tx, claim) : await claimAfterCooldown(tx, claim, d.cooldownMinutes);
      if (claim === d.sends) fresh = won;
    }
    if (!fresh) return false;
    const manage = `Alert settings: the project's Usage screen in the console.`;
    // The owner and the project's admins (docs/teams.md), each their own mail.
    for (const to of new Set([c.owner_email, ...(await alertRecipients(tx, c.id))])) {
      await ctx.mailer.sendSystemMail(
        {
          projectId: null,
          to,
          subject: d.subject,
          text: `${d.text}\n\n${manage}`,
          html: `<p>${escapeHtml(d.text)}</p><p>${escapeHtml(manage)}</p>`,
          tag: 'usage.alert',
        },
        tx,
      );
    }
    if (c.webhook) {
      const s = d.sends;
      const id = `usage_alert_${c.id}_${s.alert.replace(':', '_')}_${s.period || s.now.getTime()}`;
      const body = { type: 'usage.alert', id, projectId: c.id, projectName: c.name, alert: s.alert.split(':')[0], period: s.period || null, at: s.now.toISOString(), ...s.detail };
      await ctx.queue.add(ALERT_WEBHOOK_TASK, { projectId: c.id, id, body }, { maxAttempts: 8 }, tx);
    }
    return true;
  });
}

/** One check of every project; returns the alerts sent (the others were already sent). */
export async function checkAlerts(ctx: AppContext): Promise<Array<{ projectId: string; alert: string }>> {
  const now = ctx.clock.now();
  const sent: Array<{ projectId: string; alert: string }> = [];
  for (const c of await alertCandidates(ctx.db.admin, utcMonth(now))) {
    if (!c.enabled) continue;
    const plan = planOf(c.plan);
    const record = await ctx.projects.byId(c.id);
    const mailLimit = monthlyLimit(ctx, plan, record ? senderKindFor(ctx, record) === 'byok' : false);
    const due = [...limitAlerts(c, plan, mailLimit, now), ...(await rateAlerts(ctx, c, now))];
    for (const d of due) {
      try {
        if (await fire(ctx, c, d)) sent.push({ projectId: c.id, alert: d.sends.alert });
      } catch (err) {
        ctx.log.warn({ err, projectId: c.id, alert: d.sends.alert }, 'usage alert could not be sent');
      }
    }
  }
  return sent;
}

export const checkAlertsTask = (ctx: AppContext): Task => async () => {
  const sent = await checkAlerts(ctx);
  if (sent.length > 0) ctx.log.info({ sent }, 'usage alerts sent');
};

/** Posts one alert to the project's webhook, signed; throws (graphile-worker retries) when it fails. */
export async function deliverAlertWebhook(ctx: AppContext, payload: { projectId: string; id: string; body: unknown }): Promise<void> {
  const s = await alertSettings(ctx.db.admin, payload.projectId);
  if (!s?.webhook_url || !s.webhook_secret) return; // removed since: nothing to send
  const secret = decrypt(ctx.config.encryptionKey, s.webhook_secret);
  if (!secret) throw new Error('the usage alert webhook secret cannot be read (ENCRYPTION_KEY changed?)');
  const body = JSON.stringify(payload.body);
  const headers = signedHeaders(secret, payload.id, ctx.clock.now(), body);
  const res = await postWebhook(s.webhook_url, headers, body, { timeoutMs: ctx.config.webhooks.timeoutMs, allowPrivate: ctx.config.webhooks.allowPrivateUrls });
  if (res.status === null || res.status < 200 || res.status >= 300) throw new Error(`usage alert webhook failed: ${res.status ?? res.error}`);
}

export const alertWebhookTask = (ctx: AppContext): Task => async (payload) => {
  const p = payload as { projectId?: unknown; id?: unknown; body?: unknown };
  if (typeof p.projectId === 'string' && typeof p.id === 'string') await deliverAlertWebhook(ctx, { projectId: p.projectId, id: p.id, body: p.body });
};
