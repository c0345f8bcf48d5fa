/**
 * The records browser: one collection's documents through the dashboard data routes. The
 * route's query string is the filter (the data API's own grammar), so a filter can be saved,
 * shared as a link, pasted, or filled by the AI query builder. Pages are keyset cursors with
 * no exact total (on a large collection the count is the slow part); "Count" asks for it.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, ApiError, projectPath } from '../lib/api';
import { cell, dateTime, plural } from '../lib/format';
import { savedColumns, setSavedColumns } from '../lib/prefs';
import { parseSort, RESERVED, sortParam, type SortState } from '../lib/query';
import { route, setQuery } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import type { Collection, Doc, ListPage } from '../lib/types';
import { INLINE_TYPES } from '../lib/doc-form';
import { useLiveChanges, type Change } from '../lib/live';
import { density, setDensity } from '../lib/theme';
import { useLoad } from '../lib/use-load';
import { Check, Confirm, Empty, ErrorBox, PageHead, Pager, Select, Spinner } from '../components/ui';
import { RoleNote } from '../components/ui';
import { FilterBar } from '../components/filter-bar';
import { DocumentPanel } from '../components/document-panel';
import { ImportDialog } from '../components/import-dialog';
import { InlineEditor } from '../components/inline-cell';
import { AggregatePanel } from '../components/aggregate-panel';
import { BatchEditor } from '../components/batch-editor';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

const SYSTEM_COLUMNS = ['_id', 'createdAt', 'updatedAt', 'isDeleted'];
const PAGE_SIZES = ['25', '50', '100'];

function defaultColumns(col: Collection): string[] {
  return ['_id', ...col.model.slice(0, 8).map((f) => f.key), 'createdAt'];
}

/** The filter and options of the route, without the paging cursor. */
function listQuery(q: URLSearchParams): URLSearchParams {
  const out = new URLSearchParams();
  for (const [k, v] of q) if (k !== 'cursor') out.append(k, v);
  if (!out.has('limit')) out.set('limit', '25');
  return out;
}

export default function Records({ project, collections, rest }: SectionProps) {
  const name = rest[0] ?? '';
  const col = collections.find((c) => c.name === name);
  if (!col) {
    return (
      <Empty title={name ? `No collection named “${name}”` : 'Pick a collection'}>
        <p>Choose a collection in the sidebar, or create one under Collections.</p>
      </Empty>
    );
  }
  return <Browser key={col._id} projectId={project._id} col={col} />;
}

function Browser({ projectId, col }: { projectId: string; col: Collection }) {
  const query = listQuery(route.value.query);
  const qs = query.toString();
  const [cursors, setCursors] = useState<string[]>(['']);
  const [lastQs, setLastQs] = useState(qs);
  const [open, setOpen] = useState<{ id: string | null } | null>(null);
  const [editing, setEditing] = useState<{ id: string; key: string } | null>(null);
  // A new view (filter, sort, page size) closes the panel: it showed a row of the old one.
  if (lastQs !== qs) {
    setLastQs(qs);
    setCursors(['']);
    setOpen(null);
    setEditing(null);
  }
  const cursor = cursors[cursors.length - 1] ?? '';
  const base = projectPath(projectId, 'data', col.name);
  const page = useLoad((signal) => api.get<ListPage>(`${base}?${qs}&cursor=${encodeURIComponent(cursor)}`, signal), [base, qs, cursor]);
  const [columns, setColumns] = useState<string[]>(() => savedColumns(projectId, col.name) ?? defaultColumns(col));
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const anchor = useRef<number | null>(null);
  const [count, setCount] = useState<number | null>(null);
  const [confirm, setConfirm] = useState<null | { hard: boolean }>(null);
  const [importing, setImporting] = useState(false);
  const [batchEditing, setBatchEditing] = useState(false);
  const [tool, setTool] = useState<'aggregate' | null>(null);
  const searchable = col.model.some((f) => f.searchable);
  const [searchText, setSearchText] = useState(query.get('search') ?? '');
  const sort = parseSort(query.get('sort'));
  const showDeleted = query.get('include_deleted') === 'true';
  const items = page.data?.items ?? [];

  // Live records: the page follows the collection's changes unless the operator is editing.
  const paused = open !== null || editing !== null;
  const [changed, setChanged] = useState<Set<string>>(new Set());
  const [pending, setPending] = useState(0);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const live = useLiveChanges(projectId, col.name, col.realtime === true, (changes) => {
    const ids = changes.map((c) => c.id).filter(Boolean);
    setChanged((prev) => new Set([...prev, ...ids]));
    setTimeout(() => setChanged((prev) => {
      const next = new Set(prev);
      for (const id of ids) next.delete(id);
      return next;
    }), 2500);
    if (pausedRef.current) setPending((n) => n + changes.length);
    else if (!applyInPlace(changes)) page.reload();
  });

  /**
   * The events carry the documents: a change of a row on this page, or a new document on the
   * first page of the unfiltered newest-first view, is applied without asking the server.
   * Anything else (a filter, a sort, another page, a document too large to travel) reloads.
   */
  const applyInPlace = (changes: Change[]): boolean => {
    const data = page.data;
    if (!data) return false;
    const plain = !cursor && [...query.keys()].every((k) => k === 'limit');
    const list = [...data.items];
    for (const c of changes) {
      const at = list.findIndex((d) => d._id === c.id);
      if (!c.document || c.action === 'leave') return false;
      if (c.action === 'create') {
        if (!plain || at >= 0) return false;
        list.unshift(c.document as Doc);
      } else if (at >= 0) {
        if (c.action === 'delete' && !showDeleted) list.splice(at, 1);
        else list[at] = c.document as Doc;
      } else if (c.action !== 'delete' || showDeleted) return false;
    }
    // Not trimmed to the page size: the next page's cursor follows the last row loaded.
    page.set({ ...data, items: list });
    return true;
  };
  useEffect(() => {
    if (!paused && pending > 0) {
      setPending(0);
      page.reload();
    }
  }, [paused]);

  const fieldsByKey = useMemo(() => new Map(col.model.map((f) => [f.key, f])), [col]);
  const seenKeys = useMemo(() => {
    const keys = new Set<string>([...SYSTEM_COLUMNS, ...col.model.map((f) => f.key)]);
    for (const d of items) for (const k of Object.keys(d)) keys.add(k);
    keys.delete('deletedAt');
    return [...keys];
  }, [items, col]);

  const update = (mutate: (q: URLSearchParams) => void) => {
    const next = new URLSearchParams(query);
    mutate(next);
    setCount(null);
    setSelected(new Set());
    setQuery(next);
  };

  const toggleSort = (field: string) => {
    const next: SortState | null = sort?.field !== field ? { field, desc: false } : sort.desc ? null : { field, desc: true };
    update((q) => {
      const v = sortParam(next);
      if (v) q.set('sort', v);
      else q.delete('sort');
    });
  };

  const pick = (index: number, id: string, e: MouseEvent | KeyboardEvent) => {
    const next = new Set(selected);
    if (e.shiftKey && anchor.current !== null) {
      const [a, b] = [Math.min(anchor.current, index), Math.max(anchor.current, index)];
      const on = !selected.has(id);
      for (const d of items.slice(a, b + 1)) {
        if (on) next.add(d._id);
        else next.delete(d._id);
      }
    } else if (next.has(id)) next.delete(id);
    else next.add(id);
    anchor.current = index;
    setSelected(next);
  };

  const bulk = async (action: 'delete' | 'hard' | 'restore') => {
    const ids = [...selected];
    let done = 0;
    const failed: string[] = [];
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      const r = action === 'restore'
        ? await api.post<{ done: string[]; failed: Array<{ message: string }> }>(`${base}/bulk-restore`, { ids: chunk })
        : await api.post<{ done: string[]; failed: Array<{ message: string }> }>(`${base}/bulk-delete`, { ids: chunk, hard: action === 'hard' });
      done += r.done.length;
      failed.push(...r.failed.map((f) => f.message));
    }
    const verb = action === 'restore' ? 'restored' : action === 'hard' ? 'deleted permanently' : 'deleted';
    toast(`${plural(done, 'document')} ${verb}${failed.length ? `; ${failed.length} failed (${failed[0]})` : ''}`, failed.length ? 'error' : 'ok');
    setSelected(new Set());
    page.reload();
  };

  const exportHref = (format: 'json' | 'ndjson') => {
    const q = new URLSearchParams();
    for (const [k, v] of query) if (!['limit', 'sort', 'cursor'].includes(k)) q.append(k, v);
    const s = q.toString();
    return `${base}/export/${format}${s ? `?${s}` : ''}`;
  };

  const allOnPage = items.length > 0 && items.every((d) => selected.has(d._id));
  const cannotWrite = useGate(`POST /api/projects/:projectId/data/:collectionName`);
  const cannotImport = useGate(`POST /api/projects/:projectId/data/:collectionName/import`);
  // Inline cell editing saves with a PATCH of the document: below its role the cells are read-only.
  const cannotEdit = useGate(`PATCH /api/projects/:projectId/data/:collectionName/:id`);

  return (
    <section aria-labelledby="records-title" class={open ? 'records has-panel' : 'records'}>
      <PageHead title={col.name}>
        <button type="button" class="btn primary" disabled={!!cannotWrite} title={cannotWrite} onClick={() => setOpen({ id: null })}>New document</button>
        <button type="button" class="btn" disabled={!!cannotImport} title={cannotImport} onClick={() => setImporting(true)}>Import</button>
        <a class="btn" href={exportHref('json')} download={`${col.name}.json`}>Export JSON</a>
        <a class="btn" href={exportHref('ndjson')} download={`${col.name}.ndjson`}>Export NDJSON</a>
      </PageHead>
      <h2 id="records-title" class="sr-only">Documents of {col.name}</h2>

      {searchable && (
        <form role="search" class="inline-form search-box" aria-label="Full-text search" onSubmit={(e) => {
          e.preventDefault();
          update((q) => (searchText.trim() ? q.set('search', searchText.trim()) : q.delete('search')));
        }}>
          <label for="records-search" class="sr-only">Search {col.model.filter((f) => f.searchable).map((f) => f.key).join(', ')}</label>
          <input id="records-search" type="search" class="grow" placeholder={`Search ${col.model.filter((f) => f.searchable).map((f) => f.key).join(', ')}`}
            value={searchText} onInput={(e) => setSearchText(e.currentTarget.value)} />
          <button class="btn">Search</button>
          {query.get('search') && <button type="button" class="btn ghost" onClick={() => { setSearchText(''); update((q) => q.delete('search')); }}>Clear search</button>}
        </form>
      )}

      <FilterBar projectId={projectId} col={col} query={query} onApply={(params) => update((q) => {
        for (const k of [...q.keys()]) if (!RESERVED.has(k)) q.delete(k);
        for (const [k, v] of params) q.append(k, v);
      })} />

      <div class="toolbar">
        <Select label="Rows per page" value={query.get('limit') ?? '25'} options={PAGE_SIZES} onChange={(v) => update((q) => q.set('limit', v))} />
        <Check label="Compact rows" checked={density.value === 'compact'} onChange={(v) => setDensity(v ? 'compact' : 'comfortable')} />
        <Check label="Show deleted" checked={showDeleted} onChange={(v) => update((q) => (v ? q.set('include_deleted', 'true') : q.delete('include_deleted')))} />
        <details class="columns">
          <summary class="btn">Columns</summary>
          <fieldset>
            <legend>Visible columns</legend>
            {seenKeys.map((k) => (
              <Check key={k} label={k} checked={columns.includes(k)} onChange={(on) => {
                const next = on ? [...columns, k] : columns.filter((c) => c !== k);
                setColumns(next);
                setSavedColumns(projectId, col.name, next);
              }} />
            ))}
          </fieldset>
        </details>
        <button type="button" class="btn" onClick={async () => {
          const q = new URLSearchParams(query);
          q.set('count', 'true');
          try {
            setCount((await api.get<{ count: number }>(`${base}?${q}`)).count);
          } catch (e) {
            toastError(e);
          }
        }}>Count</button>
        {count !== null && <span class="muted" role="status">{plural(count, 'match', 'matches')}</span>}
        <button type="button" class="btn" aria-pressed={tool === 'aggregate'} onClick={() => setTool(tool === 'aggregate' ? null : 'aggregate')}>Aggregate</button>
        {live !== 'off' && (
          <span class={`live-badge ${paused ? 'paused' : live}`} role="status" title="Changes come through the realtime API">
            {paused ? `Paused while editing${pending ? ` · ${plural(pending, 'change')} waiting` : ''}` : live === 'live' ? 'Live' : live === 'connecting' ? 'Connecting…' : 'Reconnecting…'}
          </span>
        )}
      </div>

      {tool === 'aggregate' && <AggregatePanel base={base} col={col} filter={query} />}

      {selected.size > 0 && (
        <div class="bulkbar" role="region" aria-label="Bulk actions">
          <span>{selected.size} selected</span>
          <button type="button" class="btn" disabled={selected.size > 100 || !!cannotWrite} title={cannotWrite ?? (selected.size > 100 ? 'At most 100 documents per batch' : undefined)} onClick={() => setBatchEditing(true)}>Edit fields…</button>
          <button type="button" class="btn" disabled={!!cannotWrite} title={cannotWrite} onClick={() => setConfirm({ hard: false })}>Delete</button>
          {showDeleted && <button type="button" class="btn" disabled={!!cannotWrite} title={cannotWrite} onClick={() => bulk('restore').catch(toastError)}>Restore</button>}
          <button type="button" class="btn danger" disabled={!!cannotWrite} title={cannotWrite} onClick={() => setConfirm({ hard: true })}>Delete permanently</button>
          <RoleNote what="Changing documents" reason={cannotWrite} />
          <button type="button" class="btn ghost" onClick={() => setSelected(new Set())}>Clear selection</button>
        </div>
      )}

      {open && (
        <DocumentPanel key={open.id ?? 'new'} projectId={projectId} col={col} id={open.id} onClose={() => setOpen(null)} onChanged={page.reload} />
      )}

      {page.error ? (
        <ErrorBox error={page.error} retry={page.reload} />
      ) : page.data === undefined ? (
        <Spinner label="Loading documents…" />
      ) : items.length === 0 ? (
        <Empty title={cursor ? 'No more documents' : [...query.keys()].some((k) => !RESERVED.has(k)) ? 'No document matches this filter' : 'This collection is empty'}>
          <p>Create a document, import a file, or change the filter.</p>
        </Empty>
      ) : (
        <div class="table-wrap" aria-busy={page.loading}>
          <table class="grid">
            <thead>
              <tr>
                <th scope="col" class="sel">
                  <input type="checkbox" aria-label="Select every row on this page" checked={allOnPage} onChange={() => setSelected(allOnPage ? new Set() : new Set(items.map((d) => d._id)))} />
                </th>
                {columns.map((c) => (
                  <th scope="col" key={c} aria-sort={sort?.field === c ? (sort.desc ? 'descending' : 'ascending') : undefined}>
                    <button type="button" class="sort" title={c} onClick={() => toggleSort(c)}>
                      {c} <span aria-hidden="true">{sort?.field === c ? (sort.desc ? '▼' : '▲') : ''}</span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {items.map((d, i) => (
                <tr key={d._id} class={[selected.has(d._id) ? 'selected' : d.isDeleted ? 'deleted' : '', changed.has(d._id) ? 'changed' : ''].filter(Boolean).join(' ') || undefined}>
                  <td class="sel">
                    <input type="checkbox" aria-label={`Select ${d._id}`} checked={selected.has(d._id)} onClick={(e) => { e.preventDefault(); pick(i, d._id, e); }} />
                  </td>
                  {columns.map((c) => {
                    const field = fieldsByKey.get(c);
                    const inline = !!field && INLINE_TYPES.has(field.type) && !d.isDeleted && !cannotEdit;
                    if (editing && editing.id === d._id && editing.key === c && field) {
                      return (
                        <td key={c} class="editing">
                          <InlineEditor field={field} value={d[c]} onCancel={() => setEditing(null)} onSave={async (v) => {
                            const saved = await api.patch<Doc>(`${base}/${d._id}`, { [c]: v });
                            page.set({ ...page.data!, items: items.map((x) => (x._id === d._id ? saved : x)) });
                            setEditing(null);
                            toast(`${c} saved`);
                          }} />
                        </td>
                      );
                    }
                    return (
                      <td key={c} title={c === '_id' ? undefined : cell(d[c], 400) + (inline ? '\n(double-click or Enter to edit)' : '')}
                        class={inline ? 'editable' : undefined} tabIndex={inline ? -1 : undefined} data-field={inline ? c : undefined}
                        onDblClick={inline ? () => setEditing({ id: d._id, key: c }) : undefined}
                        onKeyDown={inline ? (e) => { if (e.key === 'Enter' && e.target === e.currentTarget) setEditing({ id: d._id, key: c }); } : undefined}>
                        {c === '_id' ? (
                          <button type="button" class="link mono" onClick={() => setOpen({ id: d._id })}>{d._id}</button>
                        ) : c === 'createdAt' || c === 'updatedAt' ? dateTime(d[c] as string) : field?.type === 'Date' && d[c] ? dateTime(d[c] as string) : cell(d[c])}
                      </td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}

      <Pager status={`Page ${cursors.length}${page.data ? ` · ${plural(items.length, 'row')}` : ''}`}
        hasPrevious={cursors.length > 1} hasNext={!!page.data?.nextCursor}
        onPrevious={() => { setOpen(null); setCursors(cursors.slice(0, -1)); }} onNext={() => { if (page.data?.nextCursor) { setOpen(null); setCursors([...cursors, page.data.nextCursor]); } }} />

      {confirm && (
        <Confirm
          title={confirm.hard ? 'Delete permanently?' : 'Delete documents?'}
          message={confirm.hard
            ? <p>{plural(selected.size, 'document')} will be purged. This cannot be undone.</p>
            : <p>{plural(selected.size, 'document')} will be soft-deleted (restorable with “Show deleted”).</p>}
          action={confirm.hard ? 'Delete permanently' : 'Delete'}
          onConfirm={() => bulk(confirm.hard ? 'hard' : 'delete').catch((e) => toastError(e instanceof ApiError ? e : new Error(String(e))))}
          onClose={() => setConfirm(null)}
        />
      )}
      {batchEditing && <BatchEditor projectId={projectId} col={col} ids={[...selected]} onClose={() => setBatchEditing(false)} onDone={() => { setSelected(new Set()); page.reload(); }} />}
      {importing && <ImportDialog base={base} onClose={() => setImporting(false)} onDone={page.reload} />}
    </section>
  );
}
