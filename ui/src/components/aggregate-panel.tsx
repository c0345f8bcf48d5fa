/**
 * The records browser's aggregate panel: count, sum, average, minimum and maximum grouped by up
 * to three declared fields, over the current filter and search, through the data API's
 * aggregate route (docs/data.md "Aggregation"), with a bar chart of the first measure.
 */
import { useId, useState } from 'preact/hooks';
import { api } from '../lib/api';
import { cell } from '../lib/format';
import { toastError } from '../lib/toast';
import type { Collection } from '../lib/types';

type Measure = 'count' | 'sum' | 'avg' | 'min' | 'max';
const MEASURES: Measure[] = ['count', 'sum', 'avg', 'min', 'max'];

interface Group {
  key: Record<string, unknown>;
  count?: number;
  sum?: Record<string, number | null>;
  avg?: Record<string, number | null>;
  min?: Record<string, unknown>;
  max?: Record<string, unknown>;
}

export function AggregatePanel({ base, col, filter }: { base: string; col: Collection; filter: URLSearchParams }) {
  const id = useId();
  const scalars = col.model.filter((f) => ['String', 'Number', 'Boolean', 'Date', 'Ref'].includes(f.type)).map((f) => f.key);
  const numbers = col.model.filter((f) => f.type === 'Number').map((f) => f.key);
  const ordered = col.model.filter((f) => ['Number', 'String', 'Date'].includes(f.type)).map((f) => f.key);
  const [groupBy, setGroupBy] = useState<string[]>([scalars[0] ?? '', '', '']);
  const [measure, setMeasure] = useState<Measure>('count');
  const [field, setField] = useState('');
  const [result, setResult] = useState<{ groups: Group[]; truncated: boolean; measure: Measure; field: string; by: string[] } | null>(null);
  const [busy, setBusy] = useState(false);
  const fieldsFor = measure === 'sum' || measure === 'avg' ? numbers : ordered;
  const chosenField = measure === 'count' ? '' : fieldsFor.includes(field) ? field : fieldsFor[0] ?? '';

  const run = async () => {
    const by = groupBy.filter(Boolean);
    const q = new URLSearchParams(filter);
    for (const k of ['limit', 'cursor', 'sort', 'count']) q.delete(k);
    if (by.length) q.set('groupBy', by.join(','));
    if (measure === 'count') q.set('count', 'true');
    else q.set(measure, chosenField);
    q.set('sort', measure === 'count' ? '-count' : `-${measure}.${chosenField}`);
    q.set('limit', '50');
    setBusy(true);
    try {
      const r = await api.get<{ groups: Group[]; truncated: boolean }>(`${base}/aggregate?${q}`);
      setResult({ ...r, measure, field: chosenField, by });
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(false);
    }
  };

  const valueOf = (g: Group, m: Measure, f: string): unknown => (m === 'count' ? g.count : g[m]?.[f]);
  const numeric = result ? result.groups.map((g) => valueOf(g, result.measure, result.field)).filter((v): v is number => typeof v === 'number') : [];
  const top = Math.max(1, ...numeric.map(Math.abs));

  return (
    <section class="aggregate" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`} class="sr-only">Aggregate</h3>
      <form class="inline-form" onSubmit={(e) => { e.preventDefault(); void run(); }}>
        {[0, 1, 2].map((i) => (
          <span class="field inline" key={i}>
            <label for={`${id}-g${i}`} class={i ? 'sr-only' : undefined}>{i ? `Then by (${i + 1})` : 'Group by'}</label>
            <select id={`${id}-g${i}`} value={groupBy[i]} onChange={(e) => setGroupBy(groupBy.map((g, j) => (j === i ? e.currentTarget.value : g)))}>
              <option value="">{i ? '—' : '(no grouping)'}</option>
              {[...scalars, 'createdAt:day', 'createdAt:month'].map((f) => <option value={f}>{f}</option>)}
            </select>
          </span>
        ))}
        <span class="field inline">
          <label for={`${id}-m`}>Measure</label>
          <select id={`${id}-m`} value={measure} onChange={(e) => setMeasure(e.currentTarget.value as Measure)}>
            {MEASURES.map((m) => <option value={m} disabled={m !== 'count' && (m === 'sum' || m === 'avg' ? numbers : ordered).length === 0}>{m}</option>)}
          </select>
        </span>
        {measure !== 'count' && (
          <span class="field inline">
            <label for={`${id}-f`}>of</label>
            <select id={`${id}-f`} value={chosenField} onChange={(e) => setField(e.currentTarget.value)}>
              {fieldsFor.map((f) => <option value={f}>{f}</option>)}
            </select>
          </span>
        )}
        <button class="btn primary" disabled={busy}>{busy ? 'Computing…' : 'Compute'}</button>
      </form>
      {result && (result.groups.length === 0 ? <p class="muted">No document matches.</p> : (
        <div class="table-wrap">
          <table class="grid small agg-table">
            <caption class="sr-only">{result.measure}{result.field ? ` of ${result.field}` : ''} by {result.by.join(', ') || 'nothing'}</caption>
            <thead>
              <tr>
                {result.by.map((b) => <th scope="col" key={b}>{b}</th>)}
                <th scope="col">{result.measure}{result.field ? ` ${result.field}` : ''}</th>
                <th scope="col" class="bar-col"><span class="sr-only">Chart</span></th>
              </tr>
            </thead>
            <tbody>
              {result.groups.map((g, i) => {
                const v = valueOf(g, result.measure, result.field);
                const pct = typeof v === 'number' ? Math.round((Math.abs(v) / top) * 100) : 0;
                return (
                  <tr key={i}>
                    {result.by.map((b) => <td key={b} title={cell(g.key[b.split(':')[0]!] ?? g.key[b], 400)}>{g.key[b] === null || g.key[b.split(':')[0]!] === null ? <span class="muted">(none)</span> : cell(g.key[b] ?? g.key[b.split(':')[0]!])}</td>)}
                    <td class="num">{typeof v === 'number' ? (Number.isInteger(v) ? v : v.toFixed(2)) : cell(v)}</td>
                    <td class="bar-col" aria-hidden="true"><svg class="bar" viewBox="0 0 100 10" preserveAspectRatio="none"><rect class="chart-track" width="100" height="10" /><rect class="chart-bar" width={pct} height="10" /></svg></td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {result.truncated && <p class="muted small">Only the first 50 groups are shown.</p>}
        </div>
      ))}
    </section>
  );
}
