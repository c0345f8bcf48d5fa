/**
 * Collections: the list, a new collection, and one collection's schema (fields, compound
 * indexes), row-level security and deletion. The schema assistant (AI) can fill the fields.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, projectPath } from '../lib/api';
import { plural } from '../lib/format';
import { href, navigate } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { SCALAR_TYPES, type Collection, type FieldDef, type Rls } from '../lib/types';
import { Check, Confirm, Empty, Field, PageHead, Select } from '../components/ui';
import { cleanFields, FieldsEditor } from '../components/schema-editor';
import type { SectionProps } from './project-shell';
import { RulesEditor } from './rules-editor';
import { needs } from '../lib/roles';

export default function Collections(props: SectionProps) {
  const [name] = props.rest;
  if (name === '_new') return <NewCollection {...props} />;
  const col = name ? props.collections.find((c) => c.name === name) : undefined;
  if (name && !col) return <Empty title={`No collection named “${name}”`} />;
  if (col) return <CollectionEditor key={col._id + col.schemaVersion} {...props} col={col} />;
  return <CollectionList {...props} />;
}

function CollectionList({ project, collections }: SectionProps) {
  return (
    <>
      <PageHead title="Collections">
        <a class="btn primary" href={href('p', project._id, 'collections', '_new')}>New collection</a>
      </PageHead>
      {collections.length === 0 ? (
        <Empty title="No collections yet">
          <p>A collection holds JSON documents, checked against its schema, with row-level security.</p>
        </Empty>
      ) : (
        <div class="table-wrap">
        <table class="grid">
          <thead><tr><th scope="col">Name</th><th scope="col">Fields</th><th scope="col">Row-level security</th><th scope="col">Schema version</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {collections.map((c) => (
              <tr key={c._id}>
                <td><a href={href('p', project._id, 'collections', c.name)}>{c.name}</a></td>
                <td>{plural(c.model.length, 'field')}</td>
                <td>{c.rls.enabled ? c.rls.mode : 'off'}</td>
                <td>{c.schemaVersion}</td>
                <td><a href={href('p', project._id, 'data', c.name)}>Browse records</a></td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
    </>
  );
}

function SchemaAssistant({ projectId, name, onSuggest }: { projectId: string; name: string; onSuggest: (s: { collectionName: string; schema: FieldDef[] }) => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  return (
    <details class="assistant">
      <summary>Schema assistant (AI)</summary>
      <form class="inline-form" onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          const r = await api.post<{ collectionName: string; schema: FieldDef[]; explanation: string }>(projectPath(projectId, 'ai', 'schema-suggest'), { description: text, collectionName: name || undefined });
          onSuggest(r);
          toast(r.explanation || 'Schema suggested: review it, then save.');
        } catch (err) {
          toastError(err);
        } finally {
          setBusy(false);
        }
      }}>
        <label for="assistant-text">Describe the data</label>
        <input id="assistant-text" class="grow" placeholder="blog posts with a title, body, tags and an author" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button class="btn" disabled={busy || !text.trim()}>{busy ? 'Thinking…' : 'Suggest'}</button>
      </form>
    </details>
  );
}

function NewCollection({ project, collections, reload }: SectionProps) {
  const [name, setName] = useState('');
  const [fields, setFields] = useState<FieldDef[]>([{ key: '', type: 'String' }]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  return (
    <>
      <PageHead title="New collection" />
      <SchemaAssistant projectId={project._id} name={name} onSuggest={(s) => { setName(s.collectionName); setFields(s.schema); }} />
      <form onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          await api.post(projectPath(project._id, 'collections'), { name, schema: cleanFields(fields.filter((f) => f.key.trim())) });
          toast(`Collection “${name}” created`);
          reload();
          navigate(href('p', project._id, 'collections', name));
        } catch (err) {
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}>
        {error && <p class="form-error" role="alert">{error}</p>}
        <Field label="Name" required pattern="[A-Za-z0-9_\-]{1,64}" hint="Letters, digits, _ and -." value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <h2>Fields</h2>
        <FieldsEditor fields={fields} targets={collections.map((c) => c.name)} onChange={setFields} />
        <div class="actions">
          <a class="btn" href={href('p', project._id, 'collections')}>Cancel</a>
          <button class="btn primary" disabled={busy || !!needs(project.role, 'developer')} title={needs(project.role, 'developer')}>{busy ? 'Creating…' : 'Create collection'}</button>
        </div>
      </form>
    </>
  );
}

function IndexesEditor({ indexes, fields, onChange }: { indexes: Array<{ fields: string[] }>; fields: FieldDef[]; onChange: (i: Array<{ fields: string[] }>) => void }) {
  const candidates = fields.filter((f) => SCALAR_TYPES.has(f.type) && f.key).map((f) => f.key);
  return (
    <div>
      <p class="muted">2–4 declared top-level String, Number, Boolean, Date or Ref fields each, in order (filter field first, then the range or sort field).</p>
      <ul class="fields" aria-label="Compound indexes">
        {indexes.map((ix, i) => (
          <li key={i} class="field-row">
            <Field label={`Index ${i + 1} fields (comma-separated)`} class="mono" value={ix.fields.join(', ')} list="index-fields"
              onInput={(e) => onChange(indexes.map((x, j) => (j === i ? { fields: e.currentTarget.value.split(',').map((s) => s.trim()).filter(Boolean) } : x)))} />
            <button type="button" class="btn ghost" aria-label={`Remove index ${i + 1}`} onClick={() => onChange(indexes.filter((_, j) => j !== i))}>✕</button>
          </li>
        ))}
      </ul>
      <datalist id="index-fields">{candidates.map((c) => <option value={c} />)}</datalist>
      <button type="button" class="btn" onClick={() => onChange([...indexes, { fields: candidates.slice(0, 2) }])}>Add index</button>
    </div>
  );
}

function RlsEditor({ projectId, col, onSaved }: { projectId: string; col: Collection; onSaved: () => void }) {
  const [rls, setRls] = useState<Rls>(col.rls);
  const [busy, setBusy] = useState(false);
  return (
    <form onSubmit={async (e) => {
      e.preventDefault();
      setBusy(true);
      try {
        // The owner field only when it changed: a stale default need not be in the schema.
        const { ownerField, ...rest } = rls;
        await api.patch(projectPath(projectId, 'collections', col.name, 'rls'), ownerField === col.rls.ownerField ? rest : rls);
        toast('Row-level security saved');
        onSaved();
      } catch (err) {
        toastError(err);
      } finally {
        setBusy(false);
      }
    }}>
      <Check label="Enabled (publishable-key writes by signed-in users)" checked={rls.enabled} onChange={(enabled) => setRls({ ...rls, enabled })} />
      <Select label="Mode" value={rls.mode} options={[{ value: 'public-read', label: 'public-read: anyone reads, owners write' }, { value: 'private', label: 'private: owners read and write their own' }]} onChange={(mode) => setRls({ ...rls, mode })} />
      <Select label="Owner field (holds the owner's user id)" value={rls.ownerField}
        options={[...new Set([rls.ownerField, ...(col.name.toLowerCase() === 'users' ? ['_id'] : []), ...col.model.filter((f) => f.type === 'String' || f.type === 'Ref').map((f) => f.key)])]}
        onChange={(ownerField) => setRls({ ...rls, ownerField })} />
      <Check label="Require sign-in for writes" checked={rls.requireAuthForWrite} onChange={(requireAuthForWrite) => setRls({ ...rls, requireAuthForWrite })} />
      <div class="actions"><button class="btn" disabled={busy}>Save row-level security</button></div>
    </form>
  );
}

function CollectionEditor({ project, collections, col, reload }: SectionProps & { col: Collection }) {
  const [fields, setFields] = useState<FieldDef[]>(col.model);
  const [indexes, setIndexes] = useState(col.indexes);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [deleting, setDeleting] = useState(false);
  const readOnly = needs(project.role, 'developer');
  // Other collections' rules look this one up (409 collection_referenced_by_rules): the second confirmation.
  const [referenced, setReferenced] = useState<{ message: string; rules: Array<{ collection: string; actions: string[] }> }>();
  const removed = () => {
    toast(`Collection “${col.name}” deleted`);
    reload();
    navigate(href('p', project._id, 'collections'));
  };
  return (
    <>
      <PageHead title={col.name}>
        <a class="btn" href={href('p', project._id, 'data', col.name)}>Browse records</a>
        <button type="button" class="btn danger" disabled={!!readOnly} title={readOnly} onClick={() => setDeleting(true)}>Delete collection</button>
      </PageHead>
      {readOnly && <p class="notice" id="schema-role">You can read this schema. Editing it: {readOnly}</p>}
      <p class="muted">Schema version {col.schemaVersion}. Saving a new schema checks later writes against it; stored documents are not rewritten.</p>
      <SchemaAssistant projectId={project._id} name={col.name} onSuggest={(s) => setFields(s.schema)} />
      <form onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          await api.patch(projectPath(project._id, 'collections', col.name), { schema: cleanFields(fields.filter((f) => f.key.trim())), indexes });
          toast('Schema saved');
          reload();
        } catch (err) {
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}>
        <h2>Fields</h2>
        <FieldsEditor fields={fields} targets={collections.map((c) => c.name)} onChange={setFields} />
        <h2>Compound indexes</h2>
        <IndexesEditor indexes={indexes} fields={fields} onChange={setIndexes} />
        {error && <p class="form-error" role="alert">{error}</p>}
        <div class="actions"><button class="btn primary" disabled={busy || !!readOnly} title={readOnly} aria-describedby={readOnly ? 'schema-role' : undefined}>{busy ? 'Saving…' : 'Save schema'}</button></div>
      </form>
      <h2>Row-level security</h2>
      <RlsEditor projectId={project._id} col={col} onSaved={reload} />
      <h2>Access rules</h2>
      <RulesEditor projectId={project._id} collection={col.name} />
      {deleting && (
        <Confirm
          title={`Delete collection “${col.name}”?`}
          message={<p>Every document in it is deleted, with its indexes. This cannot be undone.</p>}
          typed={col.name}
          action="Delete collection"
          onConfirm={async () => {
            try {
              await api.del(projectPath(project._id, 'collections', col.name));
            } catch (err) {
              if (!(err instanceof ApiError) || err.code !== 'collection_referenced_by_rules') throw err;
              setReferenced({ message: err.message, rules: (err.body.rules ?? []) as Array<{ collection: string; actions: string[] }> });
              return;
            }
            removed();
          }}
          onClose={() => setDeleting(false)}
        />
      )}
      {referenced && (
        <Confirm
          title={`Access rules look “${col.name}” up`}
          message={
            <>
              <p>These rules look this collection up:</p>
              <ul>{referenced.rules.map((r) => <li key={r.collection}><strong>{r.collection}</strong>: {r.actions.join(', ')}</li>)}</ul>
              <p>Change them first, or delete anyway: they are then marked broken and deny everything until their rules are saved again.</p>
            </>
          }
          action="Delete anyway"
          onConfirm={async () => {
            await api.del(`${projectPath(project._id, 'collections', col.name)}?force=true`);
            removed();
          }}
          onClose={() => setReferenced(undefined)}
        />
      )}
    </>
  );
}
