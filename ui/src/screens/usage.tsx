/**
 * Usage: this month against the plan (bars, plain SVG), usage over time per hour as charts
 * (uPlot, in this screen's own chunk; each with a table view and the plan's limit drawn where
 * one applies), and the project's usage alerts. Dashboard routes: GET .../usage,
 * GET .../usage/history, GET and PUT .../usage/alerts (docs/dashboard.md "Usage history").
 */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { bytes, dateTime } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Check, Field, Loadable, PageHead, SecretOnce, Select } from '../components/ui';
import { UsageChart } from '../components/usage-chart';
import type { SectionProps } from './project-shell';

interface Meter { used: number; limit: number }
interface UsageData {
  period: string;
  plan: string;
  database: Meter;
  storage: Meter & { files: number };
  collections: Meter;
  mail: Meter & { provider: string };
  aiSessions: Meter;
}

interface History {
  from: string;
  to: string;
  hours: string[];
  series: Record<string, Array<number | null>>;
  limits: { databaseBytes: number; storageBytes: number; mailPerMonth: number; aiSessionsPerMonth: number };
}

interface AlertSettings {
  enabled: boolean;
  errorRatePercent: number | null;
  p99Ms: number | null;
  cooldownMinutes: number;
  webhookUrl: string | null;
  recipients: string[];
  sent: Array<{ alert: string; period: string; firedAt: string; detail: Record<string, unknown> }>;
}

const count = (n: number) => Math.round(n).toLocaleString();

function Bars({ rows }: { rows: Array<{ label: string; m: Meter; fmt: (n: number) => string }> }) {
  const rowH = 44;
  const width = 600;
  const labelW = 150;
  return (
    <svg class="chart" viewBox={`0 0 ${width} ${rows.length * rowH + 10}`} role="img" aria-labelledby="usage-chart-title usage-chart-desc">
      <title id="usage-chart-title">Usage against plan limits</title>
      <desc id="usage-chart-desc">{rows.map((r) => `${r.label}: ${r.fmt(r.m.used)} of ${r.m.limit < 0 ? 'unlimited' : r.fmt(r.m.limit)}`).join('; ')}</desc>
      {rows.map((r, i) => {
        const pct = r.m.limit > 0 ? Math.min(1, r.m.used / r.m.limit) : 0;
        const y = i * rowH + 10;
        const barW = width - labelW - 10;
        return (
          <g key={r.label}>
            <text x={0} y={y + 16} class="chart-label">{r.label}</text>
            <rect x={labelW} y={y} width={barW} height={20} rx={4} class="chart-track" />
            <rect x={labelW} y={y} width={Math.max(pct > 0 ? 2 : 0, barW * pct)} height={20} rx={4} class={pct >= 0.9 ? 'chart-bar hot' : 'chart-bar'} />
            <text x={labelW} y={y + 36} class="chart-value">{r.fmt(r.m.used)} / {r.m.limit < 0 ? 'unlimited' : r.fmt(r.m.limit)} ({Math.round(pct * 100)}%)</text>
          </g>
        );
      })}
    </svg>
  );
}

const RANGES = [
  { value: '24', label: 'Last 24 hours' },
  { value: '168', label: 'Last 7 days' },
  { value: '720', label: 'Last 30 days' },
  { value: '2160', label: 'Last 90 days' },
];

/** The sum of several series, hour by hour (the request classes over all route groups). */
function sum(h: History, prefix: string, suffix: string): number[] {
  return h.hours.map((_, i) => Object.entries(h.series).reduce((n, [k, v]) => (k.startsWith(prefix) && k.endsWith(suffix) ? n + (v[i] ?? 0) : n), 0));
}

function Charts({ h }: { h: History }) {
  const s = (name: string) => h.series[name] ?? h.hours.map(() => null);
  return (
    <div class="usage-charts">
      <UsageChart
        title="Requests per hour"
        hours={h.hours}
        format={count} integers
        series={[
          { label: '2xx', values: sum(h, 'requests.', '.2xx'), color: '--accent' },
          { label: '4xx', values: sum(h, 'requests.', '.4xx'), color: '--muted' },
          { label: '5xx', values: sum(h, 'requests.', '.5xx'), color: '--danger' },
        ]}
      />
      <UsageChart title="Database size" hours={h.hours} format={bytes} limit={h.limits.databaseBytes} series={[{ label: 'Data', values: s('data.bytes'), color: '--accent' }]} />
      <UsageChart title="File storage" hours={h.hours} format={bytes} limit={h.limits.storageBytes} series={[{ label: 'Files', values: s('file.bytes'), color: '--accent' }]} />
      <UsageChart
        title="Mail this month"
        hours={h.hours}
        format={count} integers
        limit={h.limits.mailPerMonth}
        series={[
          { label: 'Sent this month', values: s('mail.sent.month'), color: '--accent' },
          { label: 'Bounced per hour', values: s('mail.bounced'), color: '--muted' },
        ]}
      />
      <UsageChart title="Realtime connections (peak per hour)" hours={h.hours} format={count} integers series={[{ label: 'Peak', values: s('realtime.peak'), color: '--accent' }]} />
      <UsageChart
        title="Functions and AI per hour"
        hours={h.hours}
        format={count} integers
        series={[
          { label: 'Invocations', values: s('functions.invocations'), color: '--accent' },
          { label: 'Errors', values: s('functions.errors'), color: '--danger' },
          { label: 'AI calls', values: s('ai.calls'), color: '--muted' },
        ]}
      />
    </div>
  );
}

function History({ projectId }: { projectId: string }) {
  const [range, setRange] = useState('168');
  const state = useLoad(
    (signal) => {
      const to = new Date();
      const from = new Date(to.getTime() - Number(range) * 3600_000);
      return api.get<History>(`${projectPath(projectId, 'usage', 'history')}?from=${encodeURIComponent(from.toISOString())}&to=${encodeURIComponent(to.toISOString())}`, signal);
    },
    [projectId, range],
  );
  return (
    <section aria-labelledby="usage-history-title">
      <h2 id="usage-history-title">Over time</h2>
      <div class="usage-range">
        <Select label="Range" value={range} options={RANGES} onChange={setRange} />
        <p class="muted">Per UTC hour, kept 90 days. Requests are app traffic (API keys); bytes are sampled every 10 minutes.</p>
      </div>
      <Loadable state={state}>{(h) => <Charts h={h} />}</Loadable>
    </section>
  );
}

const ALERT_NAMES: Record<string, string> = {
  database_bytes: 'Database size',
  storage_bytes: 'File storage',
  mail_per_month: 'Mail this month',
  ai_sessions_per_month: 'AI sessions this month',
  error_rate: 'Error rate',
  p99_latency: 'p99 latency',
};

const alertLabel = (a: string) => {
  const [key, threshold] = a.split(':');
  return `${ALERT_NAMES[key ?? ''] ?? key}${threshold ? ` at ${threshold} %` : ''}`;
};

function AlertForm({ projectId, settings, reload }: { projectId: string; settings: AlertSettings; reload: () => void }) {
  const [enabled, setEnabled] = useState(settings.enabled);
  const [errorRate, setErrorRate] = useState(settings.errorRatePercent?.toString() ?? '');
  const [p99, setP99] = useState(settings.p99Ms?.toString() ?? '');
  const [cooldown, setCooldown] = useState(String(settings.cooldownMinutes));
  const [webhook, setWebhook] = useState(settings.webhookUrl ?? '');
  const [secret, setSecret] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      const res = await api.put<{ webhookSecret: string | null }>(projectPath(projectId, 'usage', 'alerts'), {
        enabled,
        errorRatePercent: errorRate.trim() === '' ? null : Number(errorRate),
        p99Ms: p99.trim() === '' ? null : Number(p99),
        cooldownMinutes: Number(cooldown),
        webhookUrl: webhook.trim() === '' ? null : webhook.trim(),
      });
      setSecret(res.webhookSecret);
      toast('Alert settings saved');
      reload();
    } catch (err) {
      toastError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="usage-alerts" onSubmit={save} aria-labelledby="usage-alerts-title">
      <p class="muted">
        Mailed to {settings.recipients.join(', ')} at 80 % and 100 % of a plan limit (database, files, mail and AI sessions per month: once each per
        month), and when the last hour's 5xx share or p99 latency reaches your threshold (again only after the cooldown).
      </p>
      <Check label="Send usage alerts" checked={enabled} onChange={setEnabled} />
      <div class="row">
        <Field label="Error rate threshold (%)" type="number" min="0.1" max="100" step="0.1" value={errorRate} onInput={(e) => setErrorRate(e.currentTarget.value)} hint="5xx share of the last hour; empty: none" />
        <Field label="p99 latency threshold (ms)" type="number" min="1" max="600000" value={p99} onInput={(e) => setP99(e.currentTarget.value)} hint="empty: none" />
        <Field label="Cooldown (minutes)" type="number" min="5" max="10080" required value={cooldown} onInput={(e) => setCooldown(e.currentTarget.value)} />
      </div>
      <Field label="Webhook URL" type="url" value={webhook} onInput={(e) => setWebhook(e.currentTarget.value)} hint="Also POST each alert here, signed like the project's webhooks (Standard Webhooks); empty: mail only" />
      {secret && <SecretOnce label="Alert webhook signing secret" value={secret} />}
      <button type="submit" class="btn primary" disabled={busy}>Save alert settings</button>
      <h3>Alerts sent</h3>
      {settings.sent.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <table class="grid small">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Alert</th>
              <th scope="col">Period</th>
            </tr>
          </thead>
          <tbody>
            {settings.sent.map((a) => (
              <tr>
                <td>{dateTime(a.firedAt)}</td>
                <td>{alertLabel(a.alert)}</td>
                <td>{a.period || '–'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </form>
  );
}

function Alerts({ projectId }: { projectId: string }) {
  const state = useLoad((signal) => api.get<AlertSettings>(projectPath(projectId, 'usage', 'alerts'), signal), [projectId]);
  return (
    <section aria-labelledby="usage-alerts-title">
      <h2 id="usage-alerts-title">Alerts</h2>
      <Loadable state={state}>{(s) => <AlertForm projectId={projectId} settings={s} reload={state.reload} />}</Loadable>
    </section>
  );
}

export default function Usage({ project }: SectionProps) {
  const state = useLoad((s) => api.get<UsageData>(projectPath(project._id, 'usage'), s), []);
  return (
    <>
      <PageHead title="Usage" />
      <Loadable state={state}>
        {(u) => (
          <>
            <p class="muted">Plan <strong>{u.plan}</strong>, month {u.period} (UTC). Mail is counted against the {u.mail.provider === 'byok' ? 'own-key' : 'shared-key'} limit; AI sessions are the platform key's, shared by all your projects.</p>
            <Bars rows={[
              { label: 'Database', m: u.database, fmt: bytes },
              { label: 'Storage', m: u.storage, fmt: bytes },
              { label: 'Collections', m: u.collections, fmt: count },
              { label: 'Mail this month', m: u.mail, fmt: count },
              { label: 'AI sessions', m: u.aiSessions, fmt: count },
            ]} />
            <p class="muted">{count(u.storage.files)} files stored.</p>
          </>
        )}
      </Loadable>
      <History projectId={project._id} />
      <Alerts projectId={project._id} />
    </>
  );
}
