/**
 * The filter builder: rows of field / operator / value that write the data API's query string,
 * the query string itself (editable), saved filters (this browser), and the AI query builder.
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { savedFilters, setSavedFilters, type SavedFilter } from '../lib/prefs';
import { OPS, queryToRows, rowsToQuery, type FilterRow, type Op } from '../lib/query';
import { toast, toastError } from '../lib/toast';
import type { Collection } from '../lib/types';
import { Dialog } from './ui';

const SYSTEM_FIELDS = ['_id', 'createdAt', 'updatedAt'];

export function FilterBar({ projectId, col, query, onApply }: { projectId: string; col: Collection; query: URLSearchParams; onApply: (params: URLSearchParams) => void }) {
  const [rows, setRows] = useState<FilterRow[]>(() => queryToRows(query));
  const [text, setText] = useState(() => rowsToQuery(queryToRows(query)).toString());
  const [saved, setSaved] = useState<SavedFilter[]>(() => savedFilters(projectId, col.name));
  const [ask, setAsk] = useState('');
  const [asking, setAsking] = useState(false);
  const [dialog, setDialog] = useState<null | 'save' | 'manage'>(null);
  const listId = useId();
  const current = rowsToQuery(queryToRows(query)).toString();
  useEffect(() => {
    setRows(queryToRows(query));
    setText(current);
  }, [current]);

  const setRow = (i: number, patch: Partial<FilterRow>) => setRows(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  const apply = (params: URLSearchParams) => onApply(params);
  const fields = [...col.model.map((f) => f.key), ...SYSTEM_FIELDS];

  return (
    <section class="filters" aria-label="Filter">
      <datalist id={listId}>{fields.map((f) => <option value={f} />)}</datalist>
      <form onSubmit={(e) => { e.preventDefault(); apply(rowsToQuery(rows)); }}>
        {rows.map((r, i) => (
          <div class="filter-row" key={i}>
            <label class="sr-only" for={`${listId}-f${i}`}>Field of filter {i + 1}</label>
            <input id={`${listId}-f${i}`} list={listId} placeholder="field" value={r.field} onInput={(e) => setRow(i, { field: e.currentTarget.value })} />
            <label class="sr-only" for={`${listId}-o${i}`}>Operator of filter {i + 1}</label>
            <select id={`${listId}-o${i}`} value={r.op} onChange={(e) => setRow(i, { op: e.currentTarget.value as Op, value: e.currentTarget.value === 'exists' ? 'true' : r.value })}>
              {OPS.map((o) => <option value={o.op}>{o.label}</option>)}
            </select>
            <label class="sr-only" for={`${listId}-v${i}`}>Value of filter {i + 1}</label>
            {r.op === 'exists' ? (
              <select id={`${listId}-v${i}`} value={r.value} onChange={(e) => setRow(i, { value: e.currentTarget.value })}>
                <option value="true">yes</option>
                <option value="false">no</option>
              </select>
            ) : (
              <input id={`${listId}-v${i}`} placeholder="value" value={r.value} onInput={(e) => setRow(i, { value: e.currentTarget.value })} />
            )}
            <button type="button" class="btn ghost" aria-label={`Remove filter ${i + 1}`} onClick={() => setRows(rows.filter((_, j) => j !== i))}>✕</button>
          </div>
        ))}
        <div class="filter-actions">
          <button type="button" class="btn" onClick={() => setRows([...rows, { field: col.model[0]?.key ?? '', op: 'eq', value: '' }])}>Add filter</button>
          <button type="submit" class="btn primary">Apply</button>
          {current && <button type="button" class="btn ghost" onClick={() => apply(new URLSearchParams())}>Clear</button>}
        </div>
      </form>

      <details class="advanced">
        <summary>Query string, saved filters, AI</summary>
        <form class="inline-form" onSubmit={(e) => { e.preventDefault(); apply(rowsToQuery(queryToRows(text))); }}>
          <label for={`${listId}-qs`}>Query string</label>
          <input id={`${listId}-qs`} class="mono grow" value={text} placeholder="price_gte=10&category=books" onInput={(e) => setText(e.currentTarget.value)} />
          <button class="btn">Use</button>
        </form>

        <div class="inline-form">
          <label for={`${listId}-saved`}>Saved filters</label>
          <select id={`${listId}-saved`} onChange={(e) => {
            const f = saved.find((s) => s.name === e.currentTarget.value);
            if (f) apply(new URLSearchParams(f.query));
          }}>
            <option value="">{saved.length ? 'Choose…' : 'None yet'}</option>
            {saved.map((s) => <option value={s.name}>{s.name}</option>)}
          </select>
          <button type="button" class="btn" disabled={!current} onClick={() => setDialog('save')}>Save current…</button>
          {saved.length > 0 && <button type="button" class="btn ghost" onClick={() => setDialog('manage')}>Manage…</button>}
        </div>

        <form class="inline-form" onSubmit={async (e) => {
          e.preventDefault();
          setAsking(true);
          try {
            const r = await api.post<{ queryString: string; explanation: string }>(projectPath(projectId, 'ai', 'query-builder'), { collection: col.name, prompt: ask });
            apply(new URLSearchParams(r.queryString));
            toast(r.explanation || 'Filter built');
          } catch (err) {
            toastError(err);
          } finally {
            setAsking(false);
          }
        }}>
          <label for={`${listId}-ai`}>Ask AI for a filter</label>
          <input id={`${listId}-ai`} class="grow" placeholder="books under 20, cheapest first" value={ask} onInput={(e) => setAsk(e.currentTarget.value)} />
          <button class="btn" disabled={!ask.trim() || asking}>{asking ? 'Thinking…' : 'Build'}</button>
        </form>
      </details>
      {dialog && (
        <SavedFiltersDialog mode={dialog} current={current} saved={saved} onClose={() => setDialog(null)} onChange={(next, message) => {
          setSaved(next);
          setSavedFilters(projectId, col.name, next);
          if (message) toast(message);
        }} />
      )}
    </section>
  );
}

/**
 * Saved filters in the console's own dialog: name the current filter (a name already used is
 * replaced, after saying so), rename or delete the saved ones. Names may be long: they wrap.
 */
function SavedFiltersDialog({ mode, current, saved, onClose, onChange }: {
  mode: 'save' | 'manage';
  current: string;
  saved: SavedFilter[];
  onClose: () => void;
  onChange: (next: SavedFilter[], message?: string) => void;
}) {
  const id = useId();
  const [name, setName] = useState('');
  const [renaming, setRenaming] = useState<{ from: string; to: string } | null>(null);
  const clash = saved.some((s) => s.name === name.trim());
  if (mode === 'save') {
    return (
      <Dialog title="Save this filter" onClose={onClose}>
        <form onSubmit={(e) => {
          e.preventDefault();
          const n = name.trim();
          if (!n) return;
          onChange([...saved.filter((s) => s.name !== n), { name: n, query: current }], `Filter “${n}” saved in this browser`);
          onClose();
        }}>
          <p class="dialog-body mono wrap-anywhere">{current}</p>
          <div class="field">
            <label for={`${id}-name`}>Name</label>
            <input id={`${id}-name`} value={name} maxLength={200} required autoFocus onInput={(e) => setName(e.currentTarget.value)} aria-describedby={`${id}-hint`} />
            <small id={`${id}-hint`} class="hint">{clash ? 'A saved filter has this name: saving replaces it.' : 'Kept in this browser only.'}</small>
          </div>
          <div class="actions">
            <button type="button" class="btn" onClick={onClose}>Cancel</button>
            <button type="submit" class="btn primary" disabled={!name.trim()}>{clash ? 'Replace' : 'Save'}</button>
          </div>
        </form>
      </Dialog>
    );
  }
  return (
    <Dialog title="Saved filters" onClose={onClose}>
      {saved.length === 0 ? <p class="muted">No saved filter.</p> : (
        <ul class="saved-list">
          {saved.map((s) => (
            <li key={s.name}>
              {renaming?.from === s.name ? (
                <form class="inline-form" onSubmit={(e) => {
                  e.preventDefault();
                  const to = renaming.to.trim();
                  if (!to) return;
                  onChange(saved.filter((x) => x.name !== to || x.name === s.name).map((x) => (x.name === s.name ? { ...x, name: to } : x)), `Renamed to “${to}”`);
                  setRenaming(null);
                }}>
                  <label class="sr-only" for={`${id}-rename`}>New name for {s.name}</label>
                  <input id={`${id}-rename`} class="grow" value={renaming.to} maxLength={200} autoFocus onInput={(e) => setRenaming({ from: s.name, to: e.currentTarget.value })} />
                  <button class="btn primary" disabled={!renaming.to.trim()}>Rename</button>
                  <button type="button" class="btn ghost" onClick={() => setRenaming(null)}>Cancel</button>
                </form>
              ) : (
                <>
                  <div class="saved-name">
                    <strong class="wrap-anywhere">{s.name}</strong>
                    <small class="mono muted truncate" title={s.query}>{s.query}</small>
                  </div>
                  <div class="row-actions">
                    <button type="button" class="btn" aria-label={`Rename ${s.name}`} onClick={() => setRenaming({ from: s.name, to: s.name })}>Rename</button>
                    <button type="button" class="btn danger" aria-label={`Delete ${s.name}`} onClick={() => onChange(saved.filter((x) => x.name !== s.name), `Filter “${s.name}” deleted`)}>Delete</button>
                  </div>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <div class="actions">
        <button type="button" class="btn" onClick={onClose}>Done</button>
      </div>
    </Dialog>
  );
}
