/**
 * The batch editor: several field changes applied to the selected documents in one atomic
 * batch (POST /api/projects/:projectId/data/batch, all or nothing). Each value is converted to
 * the field's type and checked with the server's rules before anything is sent.
 */
import { useId, useState } from 'preact/hooks';
import { api, ApiError, projectPath } from '../lib/api';
import { valueOf } from '../lib/doc-form';
import { plural } from '../lib/format';
import { toast } from '../lib/toast';
import type { Collection } from '../lib/types';
import { validateDocument } from '../lib/validate';
import { Dialog } from './ui';
import { ChoiceOptions, hasChoices } from './document-form';

interface Change {
  field: string;
  value: string;
}

export function BatchEditor({ projectId, col, ids, onClose, onDone }: { projectId: string; col: Collection; ids: string[]; onClose: () => void; onDone: () => void }) {
  const id = useId();
  const editable = col.model.filter((f) => f.type !== 'Object' && f.type !== 'Array');
  const [changes, setChanges] = useState<Change[]>([{ field: editable[0]?.key ?? '', value: '' }]);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (i: number, patch: Partial<Change>) => setChanges(changes.map((c, j) => (j === i ? { ...c, ...patch } : c)));

  const patchOf = (): Record<string, unknown> | null => {
    const patch: Record<string, unknown> = {};
    for (const c of changes) {
      const f = editable.find((x) => x.key === c.field);
      if (!f) continue;
      const draft = f.type === 'Boolean' ? c.value === 'true' : c.value;
      const v = valueOf(f.type, draft);
      patch[f.key] = v === undefined ? null : v;
    }
    const err = Object.keys(patch).length ? validateDocument(col.model, patch, 'update') : 'Choose at least one field.';
    setProblem(err);
    return err ? null : patch;
  };

  return (
    <Dialog title={`Edit ${plural(ids.length, 'document')}`} onClose={onClose}>
      <form onSubmit={async (e) => {
        e.preventDefault();
        const patch = patchOf();
        if (!patch) return;
        setBusy(true);
        try {
          await api.post(projectPath(projectId, 'data', 'batch'), { operations: ids.map((docId) => ({ op: 'update', collection: col.name, id: docId, data: patch })) });
          toast(`${plural(ids.length, 'document')} updated in one batch`);
          onDone();
          onClose();
        } catch (err) {
          setProblem(err instanceof ApiError ? `${err.message} Nothing was changed.` : String(err));
        } finally {
          setBusy(false);
        }
      }}>
        <p class="dialog-body">Every change is applied to each selected document in one transaction: all of them, or none.</p>
        {changes.map((c, i) => {
          const f = editable.find((x) => x.key === c.field);
          return (
            <div class="filter-row" key={i}>
              <label class="sr-only" for={`${id}-f${i}`}>Field of change {i + 1}</label>
              <select id={`${id}-f${i}`} value={c.field} onChange={(e) => set(i, { field: e.currentTarget.value, value: '' })}>
                {editable.map((x) => <option value={x.key}>{x.key}</option>)}
              </select>
              <label class="sr-only" for={`${id}-v${i}`}>New value of change {i + 1}</label>
              {f?.type === 'Boolean' ? (
                <select id={`${id}-v${i}`} value={c.value || 'false'} onChange={(e) => set(i, { value: e.currentTarget.value })}>
                  <option value="true">true</option>
                  <option value="false">false</option>
                </select>
              ) : f && hasChoices(f) ? (
                <select id={`${id}-v${i}`} value={c.value} onChange={(e) => set(i, { value: e.currentTarget.value })}>
                  <ChoiceOptions field={f} current={c.value} />
                </select>
              ) : (
                <input id={`${id}-v${i}`} {...({ type: f?.type === 'Number' ? 'number' : f?.type === 'Date' ? 'datetime-local' : 'text', step: f?.type === 'Number' ? 'any' : undefined } as object)}
                  placeholder="empty: clear" value={c.value} onInput={(e) => set(i, { value: e.currentTarget.value })} />
              )}
              <button type="button" class="btn ghost" aria-label={`Remove change ${i + 1}`} onClick={() => setChanges(changes.filter((_, j) => j !== i))}>✕</button>
            </div>
          );
        })}
        <button type="button" class="btn" onClick={() => setChanges([...changes, { field: editable[0]?.key ?? '', value: '' }])}>Add a change</button>
        {problem && <p class="form-error" role="alert">{problem}</p>}
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Cancel</button>
          <button type="submit" class="btn primary" disabled={busy}>{busy ? 'Applying…' : `Apply to ${plural(ids.length, 'document')}`}</button>
        </div>
      </form>
    </Dialog>
  );
}
