/**
 * AI: the project's own provider key (only whether one is set is ever shown), the query
 * builder (its answer opens in the records browser as a filter) and the schema assistant.
 */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { href, navigate } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { Field, PageHead, Select } from '../components/ui';
import { RoleNote } from '../components/ui';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

export function KeyForm({ url, has, onSaved, what }: { url: string; has: boolean; onSaved: (has: boolean) => void; what: string }) {
  const [key, setKey] = useState('');
  const save = async (aiKey: string | null) => {
    try {
      const r = await api.put<{ hasAiKey: boolean }>(url, { aiKey });
      setKey('');
      toast(r.hasAiKey ? 'AI key saved' : 'AI key removed');
      onSaved(r.hasAiKey);
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <form onSubmit={(e) => { e.preventDefault(); void save(key); }}>
      <p class="muted">{what}: {has ? 'a key is set (never shown)' : 'no key set'}.</p>
      <Field label="Groq API key (gsk_…)" type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      <div class="actions">
        {has && <button type="button" class="btn" onClick={() => save(null)}>Remove key</button>}
        <button class="btn primary">Save key</button>
      </div>
    </form>
  );
}

export default function Ai({ project, collections, reload }: SectionProps) {
  const [collection, setCollection] = useState(collections[0]?.name ?? '');
  const [prompt, setPrompt] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ queryString: string; explanation: string } | null>(null);
  const cannotAsk = useGate(`POST /api/projects/:projectId/ai/query-builder`);
  const cannotSetKey = useGate(`PUT /api/projects/:projectId/byok`);
  return (
    <>
      <PageHead title="AI" />
      <h2>Project key</h2>
      {cannotSetKey
        ? <><p class="muted">This project's key: {project.hasAiKey ? 'a key is set (never shown)' : 'no key set'}.</p><RoleNote what="Setting the project's AI key" reason={cannotSetKey} /></>
        : <KeyForm url={projectPath(project._id, 'byok')} has={project.hasAiKey} what="This project's key" onSaved={reload} />}
      <h2>Query builder</h2>
      {collections.length === 0 ? <p class="muted">Create a collection first.</p> : (
        <form onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          try {
            setResult(await api.post(projectPath(project._id, 'ai', 'query-builder'), { collection, prompt }));
          } catch (err) {
            toastError(err);
          } finally {
            setBusy(false);
          }
        }}>
          <Select label="Collection" value={collection} options={collections.map((c) => c.name)} onChange={setCollection} />
          <Field label="What to list, in plain language" required value={prompt} onInput={(e) => setPrompt(e.currentTarget.value)} />
          <div class="actions"><button class="btn primary" disabled={busy || !!cannotAsk} title={cannotAsk}>{busy ? 'Thinking…' : 'Build the query'}</button></div>
          <RoleNote what="The query builder" reason={cannotAsk} />
        </form>
      )}
      {result && (
        <div class="card" role="status">
          <p>{result.explanation}</p>
          <p><code>{result.queryString || '(no filter)'}</code></p>
          <button type="button" class="btn" onClick={() => navigate(`${href('p', project._id, 'data', collection)}?${result.queryString}`)}>Open in the records browser</button>
        </div>
      )}
      <h2>Schema assistant</h2>
      <p>Describe the data on the <a href={href('p', project._id, 'collections', '_new')}>new collection</a> screen, or on a collection's schema screen, and review the suggested fields before saving.</p>
    </>
  );
}
