/**
 * The side panel of the records browser: one document as a form built from the schema (or, one
 * click away, in the JSON editor, loaded on demand), checked against the collection schema with
 * the server's messages before it is saved. Also soft delete, restore and permanent delete.
 * It sits beside the grid (below the toolbar on narrow windows), never over the toolbar.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { fieldOfMessage, fromForm, toForm, type FormState } from '../lib/doc-form';
import { toast, toastError } from '../lib/toast';
import type { Collection, Doc } from '../lib/types';
import { useLoad } from '../lib/use-load';
import { validateDocument, withoutSystem } from '../lib/validate';
import { DocumentForm } from './document-form';
import { lazy } from './lazy';
import { Confirm, ErrorBox, RoleNote, Spinner } from './ui';
import { useGate } from '../lib/permissions';

const JsonEditor = lazy(() => import('./json-editor'));

export function DocumentPanel({ projectId, col, id, onClose, onChanged }: { projectId: string; col: Collection; id: string | null; onClose: () => void; onChanged: () => void }) {
  const base = projectPath(projectId, 'data', col.name);
  const state = useLoad(async (signal) => (id ? api.get<Doc>(`${base}/${id}?include_deleted=true`, signal) : null), [id]);
  const heading = useRef<HTMLHeadingElement>(null);
  // Keyboard users land in the panel, and Escape closes it (focus goes back to the page).
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    heading.current?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !document.querySelector('dialog[open]')) onClose();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      opener?.focus?.();
    };
  }, [id]);
  return (
    <aside class="panel" aria-label={id ? `Document ${id}` : 'New document'}>
      <header class="panel-head">
        <h2 ref={heading} tabIndex={-1}>{id ? 'Document' : 'New document'}</h2>
        <button type="button" class="btn ghost" aria-label="Close the panel" onClick={onClose}>✕</button>
      </header>
      {state.error ? <ErrorBox error={state.error} retry={state.reload} /> : state.data === undefined ? <Spinner /> : (
        <Editor key={id ?? 'new'} base={base} col={col} doc={state.data} onClose={onClose} onChanged={(d) => { onChanged(); if (d) state.set(d); }} />
      )}
    </aside>
  );
}

type Problem = { message: string; field?: string };

function Editor({ base, col, doc, onClose, onChanged }: { base: string; col: Collection; doc: Doc | null; onClose: () => void; onChanged: (d?: Doc) => void }) {
  const [mode, setMode] = useState<'form' | 'json'>('form');
  const [form, setForm] = useState<FormState>(() => toForm(col.model, doc));
  const [text, setText] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirmHard, setConfirmHard] = useState(false);
  const opType = doc ? 'update' : 'insert';

  // The value the current view describes, or the first problem with it (the server's message).
  const current = (m = mode, f = form, t = text): { value?: Record<string, unknown>; problem?: Problem } => {
    let value: unknown;
    if (m === 'json') {
      try {
        value = JSON.parse(t);
      } catch (e) {
        return { problem: { message: `Not valid JSON: ${(e as Error).message}` } };
      }
    } else {
      const r = fromForm(col.model, f, doc);
      if (!r.ok) return { problem: { message: r.message, field: r.field } };
      value = r.value;
    }
    const err = validateDocument(col.model, value, opType);
    if (err) return { problem: { message: err, field: fieldOfMessage(err) } };
    if (doc && m === 'json') {
      const removed = Object.keys(withoutSystem(doc)).filter((k) => !(k in (value as object)));
      if (removed.length) return { problem: { message: `Removing keys is not possible with a merge update (${removed.join(', ')}); set them to null instead.` } };
    }
    return { value: value as Record<string, unknown> };
  };

  const recheck = (m: 'form' | 'json', f: FormState, t: string) => setProblem(current(m, f, t).problem ?? null);

  const switchTo = (next: 'form' | 'json') => {
    if (next === mode) return;
    const c = current();
    if (next === 'json') {
      // The JSON shows what the form holds, even half-typed (then the problem stays shown).
      const r = fromForm(col.model, form, doc);
      setText(JSON.stringify(r.ok ? r.value : doc ? withoutSystem(doc) : {}, null, 2));
      setProblem(c.problem ?? null);
      setMode('json');
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      setProblem({ message: `Not valid JSON: ${(e as Error).message}` });
      return;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      setProblem({ message: 'A document must be a JSON object.' });
      return;
    }
    const f = toForm(col.model, { ...(doc ?? {}), ...(parsed as Record<string, unknown>) } as Doc);
    setForm(f);
    recheck('form', f, text);
    setMode('form');
  };

  const run = async (fn: () => Promise<void>) => {
    setBusy(true);
    try {
      await fn();
    } catch (e) {
      toastError(e);
    } finally {
      setBusy(false);
    }
  };

  // Each button names the route it calls; the server refuses them all below the developer role.
  const cannotCreate = useGate(`POST /api/projects/:projectId/data/:collectionName`);
  const cannotUpdate = useGate(`PATCH /api/projects/:projectId/data/:collectionName/:id`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/data/:collectionName/:id`);
  const cannotRestore = useGate(`POST /api/projects/:projectId/data/:collectionName/:id/restore`);
  const cannotSave = doc ? cannotUpdate : cannotCreate;

  const save = () => run(async () => {
    if (cannotSave) return;
    const c = current();
    setProblem(c.problem ?? null);
    if (!c.value) return;
    if (doc) {
      const saved = await api.patch<Doc>(`${base}/${doc._id}`, c.value);
      toast('Document saved');
      setForm(toForm(col.model, saved));
      onChanged(saved);
    } else {
      await api.post<Doc>(base, c.value);
      toast('Document created');
      onChanged();
      onClose();
    }
  });

  return (
    <div class="panel-body">
      {doc && (
        <dl class="meta">
          <dt>_id</dt><dd class="mono">{doc._id}</dd>
          <dt>Created</dt><dd>{String(doc.createdAt)}</dd>
          <dt>Updated</dt><dd>{String(doc.updatedAt)}</dd>
          {doc.isDeleted === true && <><dt>Deleted</dt><dd>{String(doc.deletedAt)}</dd></>}
        </dl>
      )}
      <div class="segmented" role="group" aria-label="Edit as">
        <button type="button" class="btn" aria-pressed={mode === 'form'} onClick={() => switchTo('form')}>Form</button>
        <button type="button" class="btn" aria-pressed={mode === 'json'} onClick={() => switchTo('json')}>Raw JSON</button>
      </div>
      <form class="panel-form" onSubmit={(e) => { e.preventDefault(); void save(); }}>
        {mode === 'form' ? (
          <DocumentForm fields={col.model} state={form} problem={problem} onChange={(f) => { setForm(f); recheck('form', f, text); }} />
        ) : (
          <JsonEditor value={text} label="Document as JSON" onChange={(t: string) => { setText(t); if (problem) recheck('json', form, t); }} />
        )}
        {problem && (mode === 'json' || problem.field === undefined) && <p class="form-error" role="alert">{problem.message}</p>}
        {problem && mode === 'form' && problem.field !== undefined && <p class="sr-only" role="alert">{problem.message}</p>}
        <div class="actions wrap">
          <button type="submit" class="btn primary" disabled={busy || !!cannotSave} title={cannotSave}>{doc ? 'Save' : 'Create'}</button>
          {doc && !doc.isDeleted && (
            <button type="button" class="btn" disabled={busy || !!cannotDelete} title={cannotDelete} onClick={() => run(async () => {
              await api.del(`${base}/${doc._id}`);
              toast('Document deleted (restorable)');
              onChanged({ ...doc, isDeleted: true, deletedAt: new Date().toISOString() });
            })}>Delete</button>
          )}
          {doc?.isDeleted === true && (
            <button type="button" class="btn" disabled={busy || !!cannotRestore} title={cannotRestore} onClick={() => run(async () => {
              onChanged(await api.post<Doc>(`${base}/${doc._id}/restore`));
              toast('Document restored');
            })}>Restore</button>
          )}
          {doc && <button type="button" class="btn danger" disabled={busy || !!cannotDelete} title={cannotDelete} onClick={() => setConfirmHard(true)}>Delete permanently</button>}
        </div>
        <RoleNote what={doc ? 'Saving, deleting and restoring this document' : 'Creating documents'} reason={cannotSave} />
      </form>
      {confirmHard && doc && (
        <Confirm
          title="Delete permanently?"
          message={<p>Document <code>{doc._id}</code> will be purged. This cannot be undone.</p>}
          action="Delete permanently"
          onConfirm={async () => {
            await api.del(`${base}/${doc._id}?hard=true`);
            toast('Document deleted permanently');
            onChanged();
            onClose();
          }}
          onClose={() => setConfirmHard(false)}
        />
      )}
    </div>
  );
}
