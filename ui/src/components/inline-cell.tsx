/**
 * In-place editing of one scalar cell of the records grid: double-click (or Enter on the
 * focused cell) opens an input of the field's type (a select for allowed values); Enter saves (a merge update of that one
 * key, checked first with the server's rules and messages), Escape cancels.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { draftOf, valueOf } from '../lib/doc-form';
import type { FieldDef } from '../lib/types';
import { validateDocument } from '../lib/validate';
import { ChoiceOptions, hasChoices } from './document-form';

export function InlineEditor({ field, value, onSave, onCancel }: {
  field: FieldDef;
  value: unknown;
  onSave: (v: unknown) => Promise<void>;
  onCancel: () => void;
}) {
  const [draft, setDraft] = useState<string | boolean>(() => draftOf(field.type, value));
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLInputElement & HTMLSelectElement>(null);
  useEffect(() => {
    ref.current?.focus();
    if (ref.current && 'select' in ref.current && field.type !== 'Boolean') ref.current.select?.();
  }, []);

  const commit = async () => {
    let v = valueOf(field.type, draft);
    if (v === undefined) v = null;
    const err = validateDocument([field], { [field.key]: v }, 'update');
    if (err) {
      setProblem(err);
      return;
    }
    setBusy(true);
    try {
      await onSave(v);
    } catch (e) {
      setProblem((e as Error).message);
      setBusy(false);
    }
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      void commit();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      onCancel();
    }
  };
  const label = `Edit ${field.key}`;
  return (
    <div class="inline-edit">
      {field.type === 'Boolean' ? (
        <select ref={ref} aria-label={label} disabled={busy} value={String(draft)} onChange={(e) => setDraft(e.currentTarget.value === 'true')} onKeyDown={onKeyDown}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      ) : hasChoices(field) ? (
        <select
          ref={ref}
          aria-label={label}
          aria-invalid={problem ? true : undefined}
          disabled={busy}
          value={String(draft)}
          onChange={(e) => {
            setDraft(e.currentTarget.value);
            setProblem(null);
          }}
          onKeyDown={onKeyDown}
          onBlur={() => !busy && !problem && onCancel()}
        >
          <ChoiceOptions field={field} current={String(draft)} />
        </select>
      ) : (
        <input
          ref={ref}
          aria-label={label}
          aria-invalid={problem ? true : undefined}
          disabled={busy}
          {...({ type: field.type === 'Number' ? 'number' : field.type === 'Date' ? 'datetime-local' : 'text', step: field.type === 'Number' ? 'any' : field.type === 'Date' ? '0.001' : undefined } as object)}
          value={String(draft)}
          onInput={(e) => setDraft(e.currentTarget.value)}
          onKeyDown={onKeyDown}
          onBlur={() => !busy && !problem && onCancel()}
        />
      )}
      {problem && <small class="form-error" role="alert">{problem}</small>}
    </div>
  );
}
