/**
 * A document as a form built from the collection's schema: a text area for long strings, number
 * inputs, toggles, date-time pickers, selects for allowed values, a JSON box only for objects, arrays and undeclared keys.
 * Each change is checked with the server's rules and messages (lib/validate.ts), shown under
 * the field before anything is saved.
 */
import { useId } from 'preact/hooks';
import { isLongString, type FormState } from '../lib/doc-form';
import type { FieldDef } from '../lib/types';

export function DocumentForm({ fields, state, problem, onChange }: {
  fields: FieldDef[];
  state: FormState;
  problem: { message: string; field?: string } | null;
  onChange: (next: FormState) => void;
}) {
  const id = useId();
  const set = (key: string, v: string | boolean) => onChange({ ...state, drafts: { ...state.drafts, [key]: v } });
  return (
    <div class="doc-form">
      {fields.map((f) => {
        const fid = `${id}-${f.key}`;
        const draft = state.drafts[f.key];
        const bad = problem?.field === f.key;
        const described = bad ? `${fid}-err ${fid}-hint` : `${fid}-hint`;
        const common = { id: fid, 'aria-invalid': bad || undefined, 'aria-describedby': described } as const;
        let control;
        if (f.type === 'Boolean') {
          control = (
            <label class="toggle">
              <input type="checkbox" role="switch" {...common} checked={draft === true} onChange={(e) => set(f.key, e.currentTarget.checked)} />
              <span>{draft === true ? 'true' : 'false'}</span>
            </label>
          );
        } else if (hasChoices(f)) {
          control = (
            <select {...common} value={String(draft ?? '')} onChange={(e) => set(f.key, e.currentTarget.value)}>
              <ChoiceOptions field={f} current={String(draft ?? '')} />
            </select>
          );
        } else if (f.type === 'Number') {
          control = <input type="number" step="any" inputMode="decimal" {...common} value={String(draft ?? '')} onInput={(e) => set(f.key, e.currentTarget.value)} />;
        } else if (f.type === 'Date') {
          control = <input type="datetime-local" step="0.001" {...common} value={String(draft ?? '')} onInput={(e) => set(f.key, e.currentTarget.value)} />;
        } else if (f.type === 'Object' || f.type === 'Array') {
          control = <textarea class="mono" rows={4} spellcheck={false} {...common} value={String(draft ?? '')} onInput={(e) => set(f.key, e.currentTarget.value)} />;
        } else if (f.type === 'String' && isLongString(draft)) {
          control = <textarea rows={5} {...common} value={String(draft ?? '')} onInput={(e) => set(f.key, e.currentTarget.value)} />;
        } else {
          control = <input type="text" {...common} class={f.type === 'Ref' ? 'mono' : undefined} value={String(draft ?? '')} onInput={(e) => set(f.key, e.currentTarget.value)} />;
        }
        return (
          <div class={bad ? 'field invalid' : 'field'} key={f.key}>
            <label for={fid} title={f.key}>{f.key}</label>
            {control}
            <small id={`${fid}-hint`} class="hint">{hintOf(f)}</small>
            {bad && <small id={`${fid}-err`} class="form-error">{problem!.message}</small>}
          </div>
        );
      })}
      <div class={problem?.field === '' ? 'field invalid' : 'field'}>
        <label for={`${id}-extra`}>Other keys (JSON)</label>
        <textarea id={`${id}-extra`} class="mono" rows={3} spellcheck={false} placeholder="{}" value={state.extra} aria-describedby={`${id}-extra-hint`} onInput={(e) => onChange({ ...state, extra: e.currentTarget.value })} />
        <small id={`${id}-extra-hint`} class="hint">Keys the schema does not declare, as a JSON object.</small>
      </div>
    </div>
  );
}

/** A String or Number field with allowed values is edited with a select (here and inline). */
export const hasChoices = (f: FieldDef) => (f.type === 'String' || f.type === 'Number') && Array.isArray(f.enum) && f.enum.length > 0;

/**
 * The options of an allowed-values select: an empty choice (no value), the allowed values, and
 * a value stored before the list was narrowed, marked, so opening a document never changes it.
 */
export function ChoiceOptions({ field, current }: { field: FieldDef; current: string }) {
  const values = (field.enum ?? []).map(String);
  return (
    <>
      <option value="">{field.required ? 'Choose…' : '(none)'}</option>
      {current !== '' && !values.includes(current) && <option value={current}>{current} (not allowed)</option>}
      {values.map((v) => <option value={v} key={v}>{v}</option>)}
    </>
  );
}

function hintOf(f: FieldDef): string {
  const parts: string[] = [f.type === 'Array' && f.items ? `Array of ${f.items.type} (JSON)` : f.type === 'Object' ? 'Object (JSON)' : f.type];
  if (f.type === 'Ref') parts.push(`id in ${f.ref ?? 'another collection'}`);
  if (f.type === 'Date') parts.push('your local time');
  if (hasChoices(f)) parts.push(`one of ${f.enum!.length} values`);
  if (f.required) parts.push('required');
  if (f.unique) parts.push('unique');
  if (f.default !== undefined) parts.push(`default ${JSON.stringify(f.default)}`);
  if (f.readOnly) parts.push('read-only for apps');
  if (f.hidden) parts.push(`hidden (${f.hidden})`);
  return parts.join(' · ');
}
