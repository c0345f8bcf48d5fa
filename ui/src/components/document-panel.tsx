/**
 * The side panel of the records browser: one document in full, in the JSON editor (loaded on
 * demand), checked against the collection schema before it is saved. Also soft delete,
 * restore and permanent delete of that document.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { toast, toastError } from '../lib/toast';
import type { Collection, Doc } from '../lib/types';
import { useLoad } from '../lib/use-load';
import { skeleton, validateDocument, withoutSystem } from '../lib/validate';
import { lazy } from './lazy';
import { Confirm, ErrorBox, Spinner } from './ui';

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

function Editor({ base, col, doc, onClose, onChanged }: { base: string; col: Collection; doc: Doc | null; onClose: () => void; onChanged: (d?: Doc) => void }) {
  const initial = JSON.stringify(doc ? withoutSystem(doc) : skeleton(col.model), null, 2);
  const [text, setText] = useState(initial);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [confirmHard, setConfirmHard] = useState(false);

  const check = (t: string): Record<string, unknown> | null => {
    let value: unknown;
    try {
      value = JSON.parse(t);
    } catch (e) {
      setProblem(`Not valid JSON: ${(e as Error).message}`);
      return null;
    }
    const err = validateDocument(col.model, value, doc ? 'update' : 'insert');
    if (err) {
      setProblem(err);
      return null;
    }
    if (doc) {
      const removed = Object.keys(withoutSystem(doc)).filter((k) => !(k in (value as object)));
      if (removed.length) {
        setProblem(`Removing keys is not possible with a merge update (${removed.join(', ')}); set them to null instead.`);
        return null;
      }
    }
    setProblem(null);
    return value as Record<string, unknown>;
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

  const save = () => run(async () => {
    const value = check(text);
    if (!value) return;
    if (doc) {
      const saved = await api.patch<Doc>(`${base}/${doc._id}`, value);
      toast('Document saved');
      onChanged(saved);
    } else {
      await api.post<Doc>(base, value);
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
      <JsonEditor value={initial} label="Document as JSON" onChange={(t: string) => { setText(t); if (problem) check(t); }} />
      {problem && <p class="form-error" role="alert">{problem}</p>}
      <div class="actions wrap">
        <button type="button" class="btn primary" disabled={busy} onClick={save}>{doc ? 'Save' : 'Create'}</button>
        {doc && !doc.isDeleted && (
          <button type="button" class="btn" disabled={busy} onClick={() => run(async () => {
            await api.del(`${base}/${doc._id}`);
            toast('Document deleted (restorable)');
            onChanged({ ...doc, isDeleted: true, deletedAt: new Date().toISOString() });
          })}>Delete</button>
        )}
        {doc?.isDeleted === true && (
          <button type="button" class="btn" disabled={busy} onClick={() => run(async () => {
            onChanged(await api.post<Doc>(`${base}/${doc._id}/restore`));
            toast('Document restored');
          })}>Restore</button>
        )}
        {doc && <button type="button" class="btn danger" disabled={busy} onClick={() => setConfirmHard(true)}>Delete permanently</button>}
      </div>
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
