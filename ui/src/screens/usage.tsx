/** Usage this month against the plan, as bar charts (plain SVG, in this screen's own chunk). */
import { api, projectPath } from '../lib/api';
import { bytes } from '../lib/format';
import { useLoad } from '../lib/use-load';
import { Loadable, PageHead } from '../components/ui';
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

const count = (n: number) => n.toLocaleString();

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
    </>
  );
}
