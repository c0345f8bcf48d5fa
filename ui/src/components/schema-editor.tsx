/**
 * The field editor of a collection schema: key, type, required, unique, allowed values, Ref target, nested
 * Object fields and Array item types (recursively), in order. Pure props: the screen saves.
 */
import { useId, useState } from 'preact/hooks';
import { FIELD_TYPES, SCALAR_TYPES, type FieldDef, type FieldType } from '../lib/types';

type Item = NonNullable<FieldDef['items']>;

function TypeSelect({ id, value, onChange }: { id: string; value: FieldType; onChange: (t: FieldType) => void }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value as FieldType)}>
      {FIELD_TYPES.map((t) => <option value={t}>{t}</option>)}
    </select>
  );
}

function RefSelect({ id, value, targets, onChange }: { id: string; value: string; targets: string[]; onChange: (v: string) => void }) {
  return (
    <select id={id} value={value} onChange={(e) => onChange(e.currentTarget.value)}>
      <option value="">Choose a collection…</option>
      {targets.map((t) => <option value={t}>{t}</option>)}
    </select>
  );
}

/** Changing the type drops what belonged to the old one (ref, items, nested fields). */
function retype<T extends Omit<FieldDef, 'key'>>(f: T, type: FieldType): T {
  const { ref: _r, items: _i, fields: _f, enum: _e, unique, ...rest } = f;
  const next = { ...rest, type } as T;
  if (unique && SCALAR_TYPES.has(type)) next.unique = true;
  if (type === 'Object') next.fields = [];
  if (type === 'Array') next.items = { type: 'String' };
  return next;
}

/** Comma-separated text to allowed values (Numbers for a Number field; nonsense stays for the server to name). */
function parseChoices(text: string, type: FieldType): Array<string | number> | undefined {
  const parts = text.split(',').map((x) => x.trim()).filter(Boolean);
  if (!parts.length) return undefined;
  return type === 'Number' ? parts.map((x) => (Number.isFinite(Number(x)) ? Number(x) : x)) : parts;
}

/** The allowed values of a String or Number field, typed as a comma-separated list. */
function ChoicesInput({ id, name, field, onChange }: { id: string; name: string; field: FieldDef; onChange: (f: FieldDef) => void }) {
  const [text, setText] = useState(() => (field.enum ?? []).join(', '));
  // The list changed from outside (fields moved, a suggestion applied): show the field's own.
  const same = JSON.stringify(parseChoices(text, field.type)) === JSON.stringify(field.enum);
  const shown = same ? text : (field.enum ?? []).join(', ');
  return (
    <>
      <label class="sr-only" for={id}>Allowed values of {name} (comma-separated)</label>
      <input
        id={id}
        class="choices-input"
        placeholder="allowed values: a, b, c"
        value={shown}
        onInput={(e) => {
          setText(e.currentTarget.value);
          onChange({ ...field, enum: parseChoices(e.currentTarget.value, field.type) });
        }}
      />
    </>
  );
}

function ItemsEditor({ items, targets, depth, label, onChange }: { items: Item; targets: string[]; depth: number; label: string; onChange: (i: Item) => void }) {
  const id = useId();
  return (
    <div class="nested">
      <div class="field-row">
        <label for={`${id}-t`}>{label}: item type</label>
        <TypeSelect id={`${id}-t`} value={items.type} onChange={(t) => onChange(retype(items, t))} />
        {items.type === 'Ref' && (
          <>
            <label for={`${id}-r`}>Item target</label>
            <RefSelect id={`${id}-r`} value={items.ref ?? ''} targets={targets} onChange={(ref) => onChange({ ...items, ref })} />
          </>
        )}
      </div>
      {items.type === 'Object' && (
        <FieldsEditor fields={items.fields ?? []} targets={targets} depth={depth + 1} onChange={(fields) => onChange({ ...items, fields })} />
      )}
      {items.type === 'Array' && items.items && (
        <ItemsEditor items={items.items} targets={targets} depth={depth + 1} label={`${label}[]`} onChange={(i) => onChange({ ...items, items: i })} />
      )}
    </div>
  );
}

function FieldEditor(props: { field: FieldDef; index: number; count: number; targets: string[]; depth: number; onChange: (f: FieldDef) => void; onRemove: () => void; onMove: (by: number) => void }) {
  const { field: f, depth, onChange } = props;
  const id = useId();
  const name = f.key || `field ${props.index + 1}`;
  return (
    <li class="field-edit">
      <div class="field-row">
        <label class="sr-only" for={`${id}-k`}>Name of {name}</label>
        <input id={`${id}-k`} class="mono" placeholder="key" value={f.key} onInput={(e) => onChange({ ...f, key: e.currentTarget.value })} />
        <label class="sr-only" for={`${id}-t`}>Type of {name}</label>
        <TypeSelect id={`${id}-t`} value={f.type} onChange={(t) => onChange({ ...retype(f, t), key: f.key })} />
        <label class="check"><input type="checkbox" checked={!!f.required} onChange={(e) => onChange({ ...f, required: e.currentTarget.checked || undefined })} /> required</label>
        {depth === 0 && SCALAR_TYPES.has(f.type) && (
          <label class="check"><input type="checkbox" checked={!!f.unique} onChange={(e) => onChange({ ...f, unique: e.currentTarget.checked || undefined })} /> unique</label>
        )}
        {(f.type === 'String' || f.type === 'Number') && <ChoicesInput key={f.type} id={`${id}-e`} name={name} field={f} onChange={onChange} />}
        {f.type === 'Ref' && (
          <>
            <label class="sr-only" for={`${id}-r`}>Target collection of {name}</label>
            <RefSelect id={`${id}-r`} value={f.ref ?? ''} targets={props.targets} onChange={(ref) => onChange({ ...f, ref })} />
          </>
        )}
        <span class="row-tools">
          <button type="button" class="btn ghost" aria-label={`Move ${name} up`} disabled={props.index === 0} onClick={() => props.onMove(-1)}>↑</button>
          <button type="button" class="btn ghost" aria-label={`Move ${name} down`} disabled={props.index === props.count - 1} onClick={() => props.onMove(1)}>↓</button>
          <button type="button" class="btn ghost" aria-label={`Remove ${name}`} onClick={props.onRemove}>✕</button>
        </span>
      </div>
      {f.type === 'Object' && <FieldsEditor fields={f.fields ?? []} targets={props.targets} depth={depth + 1} onChange={(fields) => onChange({ ...f, fields })} />}
      {f.type === 'Array' && <ItemsEditor items={f.items ?? { type: 'String' }} targets={props.targets} depth={depth} label={name} onChange={(items) => onChange({ ...f, items })} />}
    </li>
  );
}

export function FieldsEditor({ fields, targets, depth = 0, onChange }: { fields: FieldDef[]; targets: string[]; depth?: number; onChange: (f: FieldDef[]) => void }) {
  const set = (i: number, f: FieldDef) => onChange(fields.map((x, j) => (j === i ? f : x)));
  const move = (i: number, by: number) => {
    const next = [...fields];
    const [f] = next.splice(i, 1);
    next.splice(i + by, 0, f!);
    onChange(next);
  };
  return (
    <div class={depth ? 'nested' : undefined}>
      <ul class="fields" aria-label={depth ? 'Nested fields' : 'Fields'}>
        {fields.map((f, i) => (
          <FieldEditor key={i} field={f} index={i} count={fields.length} targets={targets} depth={depth} onChange={(x) => set(i, x)} onRemove={() => onChange(fields.filter((_, j) => j !== i))} onMove={(by) => move(i, by)} />
        ))}
      </ul>
      <button type="button" class="btn" onClick={() => onChange([...fields, { key: '', type: 'String' }])}>{depth ? 'Add nested field' : 'Add field'}</button>
    </div>
  );
}

/** The schema as the API takes it: empty flags and blank refs dropped. */
export function cleanFields(fields: FieldDef[]): FieldDef[] {
  const clean = <T extends Omit<FieldDef, 'key'>>(f: T): T => {
    const out = { ...f } as T;
    if (!out.required) delete out.required;
    if (!out.unique) delete out.unique;
    if (!out.enum?.length) delete out.enum;
    if (out.fields) out.fields = cleanFields(out.fields);
    if (out.items) out.items = clean(out.items);
    return out;
  };
  return fields.map((f) => ({ ...clean(f), key: f.key.trim() }));
}
