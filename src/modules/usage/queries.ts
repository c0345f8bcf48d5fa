/**
 * Every SQL statement of the usage domain (migrations/073_usage_history.sql): the hourly table's
 * batched upserts, samples, reads and trim; alert settings and the sent-alert claims.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../database.js';
import type { Encrypted } from '../../lib/crypto.js';

type Db = Kysely<Database>;

/** A batch of counts, column by column. `hours`: hours since the epoch. */
export interface CountColumns {
  projectIds: string[];
  hours: number[];
  metrics: string[];
  nodes: string[];
  values: number[];
}

/**
 * Adds a node's counts in one statement (five array parameters whatever the batch). Node ''
 * rows add up; a node's own row (a peak) keeps the greater. Rows are taken in key order, so two
 * nodes upserting the same rows at once wait for each other instead of deadlocking.
 */
export async function addCounts(db: Db, c: CountColumns): Promise<void> {
  await sql`
    INSERT INTO usage_hourly AS u (project_id, hour, metric, node, value)
    SELECT x.project_id, timestamptz 'epoch' + x.hour * interval '1 hour', x.metric, x.node, x.value
      FROM unnest(${c.projectIds}::text[], ${c.hours}::int8[], ${c.metrics}::text[], ${c.nodes}::text[], ${c.values}::int8[])
        AS x (project_id, hour, metric, node, value)
     ORDER BY 1, 2, 3, 4
    ON CONFLICT (project_id, hour, metric, node) DO UPDATE
       SET value = CASE WHEN u.node = '' THEN u.value + excluded.value ELSE greatest(u.value, excluded.value) END`.execute(db);
}

export interface Sample {
  projectId: string;
  hour: Date;
  metric: string;
  value: number;
}

/** Samples replace the hour's value (the job may run several times an hour). */
export async function writeSamples(db: Db, samples: Sample[]): Promise<void> {
  if (samples.length === 0) return;
  await sql`
    INSERT INTO usage_hourly AS u (project_id, hour, metric, node, value)
    SELECT x.project_id, x.hour, x.metric, '', x.value
      FROM unnest(${samples.map((s) => s.projectId)}::text[], ${samples.map((s) => s.hour.toISOString())}::timestamptz[],
                  ${samples.map((s) => s.metric)}::text[], ${samples.map((s) => s.value)}::int8[]) AS x (project_id, hour, metric, value)
     ORDER BY 1, 2, 3
    ON CONFLICT (project_id, hour, metric, node) DO UPDATE SET value = excluded.value`.execute(db);
}

/** Every project's stored database and file bytes (the quota counters), for the hourly sample. */
export async function storedBytes(db: Db) {
  const { rows } = await sql<{ project_id: string; db_bytes: string; storage_bytes: string }>`
    SELECT p.id AS project_id,
           coalesce((SELECT used FROM usage_counters WHERE subject_id = p.id AND metric = 'db_bytes' AND period = ''), 0) AS db_bytes,
           coalesce((SELECT used FROM usage_counters WHERE subject_id = p.id AND metric = 'storage_bytes' AND period = ''), 0) AS storage_bytes
      FROM projects p`.execute(db);
  return rows;
}

/**
 * Mail per project and hour since `from`: queued messages that were sent (any status past
 * `queued`, `failed` excluded) and those that bounced, by the hour they were sent.
 */
export async function mailByHour(db: Db, from: Date) {
  const { rows } = await sql<{ project_id: string; hour: Date; sent: string; bounced: string }>`
    SELECT project_id, date_trunc('hour', sent_at) AS hour,
           count(*) FILTER (WHERE status IN ('sent', 'delivered', 'bounced', 'complained')) AS sent,
           count(*) FILTER (WHERE status = 'bounced') AS bounced
      FROM mail_logs
     WHERE sent_at >= ${from} AND project_id IS NOT NULL
     GROUP BY 1, 2`.execute(db);
  return rows;
}

/** A project's hours in [from, to) for the metrics asked, nodes summed. */
export async function hourlyUsage(db: Db, projectId: string, from: Date, to: Date, metrics: string[]) {
  const { rows } = await sql<{ hour: Date; metric: string; value: string }>`
    SELECT hour, metric, sum(value) AS value
      FROM usage_hourly
     WHERE project_id = ${projectId} AND hour >= ${from} AND hour < ${to} AND metric = ANY(${metrics}::text[])
     GROUP BY hour, metric`.execute(db);
  return rows;
}

/** A project's total of one metric over [from, to), nodes summed. */
export async function usageTotal(db: Db, projectId: string, metric: string, from: Date, to: Date): Promise<number> {
  const { rows } = await sql<{ total: string | null }>`
    SELECT sum(value) AS total FROM usage_hourly
     WHERE project_id = ${projectId} AND metric = ${metric} AND hour >= ${from} AND hour < ${to}`.execute(db);
  return Number(rows[0]?.total ?? 0);
}

/** The retention bound, every project at once. */
export async function deleteHoursBefore(db: Db, before: Date): Promise<number> {
  const res = await db.deleteFrom('usage_hourly').where('hour', '<', before).executeTakeFirst();
  return Number(res.numDeletedRows);
}

export async function deleteProjectUsage(db: Db, projectId: string): Promise<void> {
  await db.deleteFrom('usage_hourly').where('project_id', '=', projectId).execute();
  await db.deleteFrom('usage_alerts_sent').where('project_id', '=', projectId).execute();
}

// ---- alerts ----

export async function alertSettings(db: Db, projectId: string) {
  return db.selectFrom('usage_alert_settings').selectAll().where('project_id', '=', projectId).executeTakeFirst();
}

export interface AlertSettingsWrite {
  enabled: boolean;
  errorRatePercent: number | null;
  p99Ms: number | null;
  cooldownMinutes: number;
  webhookUrl: string | null;
  webhookSecret: Encrypted | null;
}

export async function saveAlertSettings(db: Db, projectId: string, s: AlertSettingsWrite, now: Date): Promise<void> {
  const row = {
    enabled: s.enabled,
    error_rate_percent: s.errorRatePercent,
    p99_ms: s.p99Ms,
    cooldown_minutes: s.cooldownMinutes,
    webhook_url: s.webhookUrl,
    webhook_secret: s.webhookSecret === null ? null : JSON.stringify(s.webhookSecret),
    updated_at: now,
  };
  await db
    .insertInto('usage_alert_settings')
    .values({ project_id: projectId, ...row })
    .onConflict((oc) => oc.column('project_id').doUpdateSet(row))
    .execute();
}

/** Every project with what its alerts need: owner, plan, settings and the plan-limited counters. */
export async function alertCandidates(db: Db, month: string) {
  const { rows } = await sql<{
    id: string;
    name: string;
    owner_id: string;
    owner_email: string;
    plan: string;
    enabled: boolean;
    error_rate_percent: number | null;
    p99_ms: number | null;
    cooldown_minutes: number;
    webhook: boolean;
    db_bytes: string;
    storage_bytes: string;
    mail: string;
    ai_sessions: string;
  }>`
    SELECT p.id, p.name, p.owner_id, o.email AS owner_email, o.plan,
           coalesce(s.enabled, true) AS enabled, s.error_rate_percent, s.p99_ms, coalesce(s.cooldown_minutes, 60) AS cooldown_minutes,
           s.webhook_url IS NOT NULL AS webhook,
           coalesce((SELECT used FROM usage_counters WHERE subject_id = p.id AND metric = 'db_bytes' AND period = ''), 0) AS db_bytes,
           coalesce((SELECT used FROM usage_counters WHERE subject_id = p.id AND metric = 'storage_bytes' AND period = ''), 0) AS storage_bytes,
           coalesce((SELECT used FROM usage_counters WHERE subject_id = p.id AND metric = 'mail' AND period = ${month}), 0) AS mail,
           coalesce((SELECT used FROM usage_counters WHERE subject_id = o.id AND metric = 'ai_sessions' AND period = ${month}), 0) AS ai_sessions
      FROM projects p
      JOIN operators o ON o.id = p.owner_id
      LEFT JOIN usage_alert_settings s ON s.project_id = p.id
     ORDER BY p.id`.execute(db);
  return rows;
}

/** A project's requests of the last hour in the request log: how many, how many 5xx, the p99. */
export async function recentRequestStats(db: Db, projectId: string, since: Date) {
  const { rows } = await sql<{ requests: string; errors: string; p99: number | null }>`
    SELECT count(*) AS requests, count(*) FILTER (WHERE status >= 500) AS errors,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99
      FROM request_logs WHERE project_id = ${projectId} AND at >= ${since}`.execute(db);
  const r = rows[0]!;
  return { requests: Number(r.requests), errors: Number(r.errors), p99: r.p99 === null ? null : Number(r.p99) };
}

export interface AlertClaim {
  subjectId: string;
  alert: string;
  period: string;
  projectId: string;
  now: Date;
  detail: Record<string, unknown>;
}

/** Claims a once-per-period alert; false when it was already sent this period. */
export async function claimOnce(db: Db, c: AlertClaim): Promise<boolean> {
  const row = await db
    .insertInto('usage_alerts_sent')
    .values({ subject_id: c.subjectId, alert: c.alert, period: c.period, project_id: c.projectId, fired_at: c.now, detail: JSON.stringify(c.detail) })
    .onConflict((oc) => oc.columns(['subject_id', 'alert', 'period']).doNothing())
    .returning('alert')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Claims an alert with a cooldown: true when it never fired or last fired `cooldownMinutes`
 * ago or more. A concurrent claim waits on the row and then sees the new `fired_at`.
 */
export async function claimAfterCooldown(db: Db, c: AlertClaim, cooldownMinutes: number): Promise<boolean> {
  const since = new Date(c.now.getTime() - cooldownMinutes * 60_000);
  const { rows } = await sql<{ alert: string }>`
    INSERT INTO usage_alerts_sent AS s (subject_id, alert, period, project_id, fired_at, detail)
    VALUES (${c.subjectId}, ${c.alert}, ${c.period}, ${c.projectId}, ${c.now}, ${JSON.stringify(c.detail)}::jsonb)
    ON CONFLICT (subject_id, alert, period) DO UPDATE SET fired_at = excluded.fired_at, detail = excluded.detail
     WHERE s.fired_at <= ${since}
    RETURNING s.alert`.execute(db);
  return rows.length > 0;
}

/** The alerts a project sent, newest first. */
export function sentAlerts(db: Db, projectId: string, limit: number) {
  return db
    .selectFrom('usage_alerts_sent')
    .select(['alert', 'period', 'fired_at', 'detail'])
    .where('project_id', '=', projectId)
    .orderBy('fired_at', 'desc')
    .limit(limit)
    .execute();
}
