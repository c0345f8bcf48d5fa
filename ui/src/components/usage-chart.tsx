/**
 * One usage chart: hourly series drawn by uPlot (a small canvas chart library, loaded only with
 * the Usage screen's chunk), the plan's limit as a dashed line where one applies, and a table
 * view of the same numbers (the accessible alternative: a button toggles it; the canvas itself
 * is hidden from assistive technology, its figure carries a text summary).
 */
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  /** A CSS colour variable (`--accent`), resolved against the current theme. */
  color: string;
}

export interface ChartProps {
  title: string;
  hours: string[];
  series: ChartSeries[];
  /** The plan's limit for this chart's values (-1 or undefined: none drawn). */
  limit?: number;
  format: (n: number) => string;
  /** Whole numbers (counts): the y axis ticks only at integers. */
  integers?: boolean;
}

/** Tick steps of a count axis: whole numbers only. */
const INTEGER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];

/** A CSS colour (a variable, possibly light-dark()) as the rgb() text a canvas understands. */
function resolveColor(cssVar: string, host: HTMLElement): string {
  const probe = document.createElement('span');
  probe.style.color = `var(${cssVar})`;
  host.appendChild(probe);
  const rgb = getComputedStyle(probe).color;
  probe.remove();
  return rgb;
}

const hourLabel = (iso: string) => new Date(iso).toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

export function UsageChart({ title, hours, series, limit, format, integers }: ChartProps) {
  const plotRef = useRef<HTMLDivElement>(null);
  const [table, setTable] = useState(false);
  const id = useId();
  const hasLimit = limit !== undefined && limit > 0;
  const all = [...series, ...(hasLimit ? [{ label: 'Plan limit', values: hours.map(() => limit), color: '--danger' }] : [])];
  const last = series.map((s) => {
    const v = [...s.values].reverse().find((x) => x !== null);
    return `${s.label}: ${v === undefined || v === null ? 'no data' : format(v)}`;
  });
  const summary = `${title}, ${hours.length} hours. Latest ${last.join(', ')}${hasLimit ? `. Plan limit ${format(limit)}` : ''}.`;

  useEffect(() => {
    const host = plotRef.current;
    if (!host || table) return;
    const xs = hours.map((h) => Date.parse(h) / 1000);
    const text = resolveColor('--muted', host);
    const grid = resolveColor('--border', host);
    const opts: uPlot.Options = {
      width: Math.max(280, host.clientWidth),
      height: 220,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, min, max) => [0, Math.max(1, max, min)] } },
      axes: [
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
        { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 70, values: (_u, ticks) => ticks.map((t) => format(t)), ...(integers ? { incrs: INTEGER_STEPS } : {}) },
      ],
      series: [
        { label: 'Hour' },
        ...all.map((s) => ({
          label: s.label,
          stroke: resolveColor(s.color, host),
          width: s.label === 'Plan limit' ? 1.5 : 2,
          dash: s.label === 'Plan limit' ? [6, 4] : undefined,
          spanGaps: false,
          // A sparse series (a gauge sampled a few times) would draw no line: its points show.
          points: { show: s.values.filter((v) => v !== null).length <= 48, size: 5 },
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : format(v)),
        })),
      ],
    };
    const plot = new uPlot(opts, [xs, ...all.map((s) => s.values)] as uPlot.AlignedData, host);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, host.clientWidth), height: 220 }));
    resize.observe(host);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [hours, series, limit, table, integers]);

  return (
    <figure class="usage-chart" aria-labelledby={`${id}-t`} data-limit={hasLimit ? String(limit) : undefined}>
      <div class="usage-chart-head">
        <figcaption id={`${id}-t`}>{title}</figcaption>
        <button type="button" class="btn small" aria-pressed={table} onClick={() => setTable(!table)}>
          {table ? 'Show chart' : 'Show table'}
          <span class="sr-only"> for {title}</span>
        </button>
      </div>
      <p class="sr-only">{summary}</p>
      {table ? (
        <div class="usage-table" tabIndex={0} role="region" aria-label={`${title} per hour, table`}>
          <table class="grid small">
            <caption class="sr-only">{title} per hour</caption>
            <thead>
              <tr>
                <th scope="col">Hour</th>
                {all.map((s) => (
                  <th scope="col">{s.label}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {hours.map((h, i) => (
                <tr>
                  <th scope="row">{hourLabel(h)}</th>
                  {all.map((s) => {
                    const v = s.values[i];
                    return <td>{v === null || v === undefined ? '–' : format(v)}</td>;
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : (
        <div class="usage-plot" ref={plotRef} aria-hidden="true" />
      )}
    </figure>
  );
}
