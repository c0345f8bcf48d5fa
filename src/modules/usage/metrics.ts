/**
 * The usage history's metrics (docs/dashboard.md "Usage history"): their names as the hourly
 * table and the dashboard API spell them, and how each is kept. Counted: added up on each node
 * and in the table. Peak: each node's highest of the hour, the hour's being their sum. Sampled:
 * written by the `usage:sample` job, the hour's last sample.
 */

/** The route groups of app traffic (src/route-groups.ts) the request counts are kept by. */
export const REQUEST_GROUPS = ['apiKey', 'secretKey', 'endUser'] as const;
/** Status classes: `2xx` is every answer below 400 (a 304 too), `4xx`, `5xx` (500 and above). */
export const STATUS_CLASSES = ['2xx', '4xx', '5xx'] as const;

export const REQUEST_METRICS = REQUEST_GROUPS.flatMap((g) => STATUS_CLASSES.map((c) => `requests.${g}.${c}`));

/** What each node counts in memory, in slot order (requests first: group × class). */
export const COUNTED = [...REQUEST_METRICS, 'functions.invocations', 'functions.errors', 'ai.calls'] as const;
export type CountedMetric = 'functions.invocations' | 'functions.errors' | 'ai.calls';

export const PEAK_METRIC = 'realtime.peak';

/** Written by the sample job: replaces the hour's value. */
export const SAMPLED = ['data.bytes', 'file.bytes', 'mail.sent', 'mail.bounced'] as const;

export const ALL_METRICS: readonly string[] = [...COUNTED, PEAK_METRIC, ...SAMPLED];
/** Metrics whose hours without a row are "not sampled" (null), not zero. */
export const GAUGES: ReadonlySet<string> = new Set(['data.bytes', 'file.bytes']);

/** Families a client may ask for by prefix: `requests` is the nine request metrics. */
export function expandMetrics(names: readonly string[]): { metrics: string[]; unknown: string[] } {
  const metrics = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const matched = ALL_METRICS.filter((m) => m === name || m.startsWith(`${name}.`));
    if (matched.length === 0) unknown.push(name);
    for (const m of matched) metrics.add(m);
  }
  return { metrics: ALL_METRICS.filter((m) => metrics.has(m)), unknown };
}
