/**
 * A collection's access rules (docs/rules.md): one expression per action, saved together; a
 * refused rule is shown at its position; index warnings with their plan; "test as user X"
 * (the server's preview, under the real policies, rolled back); and the compiled SQL and the
 * partition's policies, read-only. A rule marked broken (it looks up a collection that was
 * deleted) is shown as such with its reason: it denies everything until the rules are saved.
 */
import { useState } from 'preact/hooks';
import { api, ApiError, projectPath } from '../lib/api';
import { toast } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Loadable, Select } from '../components/ui';
import { RoleNote } from '../components/ui';
import { useGate } from '../lib/permissions';

const ACTIONS = ['list', 'view', 'create', 'update', 'delete'] as const;
type Action = (typeof ACTIONS)[number];
type Rules = Record<Action, string | null>;
interface Warning { action: string; code: string; message: string; plan?: string }
interface Policy { name: string; command: string; roles: string[]; using: string | null; withCheck: string | null }
interface Broken { action: string; reason: string }
interface RulesData { name: string; rules: Rules; sql: Record<string, string>; policies: Policy[]; warnings: Warning[]; broken?: Broken[] }
interface Preview { allowed: boolean; reason: 'hidden' | 'denied' | null; count?: number; ids?: string[]; sql: string | null }
interface RuleError { action: string; position: number; message: string }

const HINTS: Record<Action, string> = {
  list: 'Which documents a list returns, e.g. published = true || author = @auth.id',
  view: 'Which documents a get by id returns (empty: the list rule)',
  create: 'What a new document must satisfy, e.g. author = @auth.id',
  update: 'Who may change a document, before and after, e.g. author = @auth.id',
  delete: 'Who may delete a document',
};

export function RulesEditor({ projectId, collection }: { projectId: string; collection: string }) {
  const base = projectPath(projectId, 'collections', collection, 'rules');
  const state = useLoad((signal) => api.get<RulesData>(base, signal), [base]);
  return <Loadable state={state}>{(data) => <RulesForm key={JSON.stringify(data.rules)} base={base} projectId={projectId} data={data} onSaved={state.reload} />}</Loadable>;
}

/** The users collection: its documents are the project's end users (docs/rules.md, "The users collection"). */
const isUsers = (data: RulesData) => data.name.toLowerCase() === 'users';

function RulesForm({ base, projectId, data, onSaved }: { base: string; projectId: string; data: RulesData; onSaved: () => void }) {
  const users = isUsers(data);
  const [rules, setRules] = useState<Record<Action, string>>(Object.fromEntries(ACTIONS.map((a) => [a, data.rules[a] ?? ''])) as Record<Action, string>);
  const [error, setError] = useState<RuleError>();
  const [busy, setBusy] = useState(false);
  const cannotSave = useGate(`PATCH /api/projects/:projectId/collections/:name/rules`);
  const broken = new Map((data.broken ?? []).map((b) => [b.action, b.reason]));
  return (
    <>
      {broken.size > 0 && (
        <section class="notice" role="status" aria-label="Broken rules">
          <strong>{broken.size === 1 ? '1 rule is broken' : `${broken.size} rules are broken`}</strong>: it denies every publishable-key caller until the
          rules are saved again with a fix. {(data.broken ?? []).map((b) => <span key={b.action}><br /><strong>{b.action}</strong>: {b.reason}</span>)}
        </section>
      )}
      <form aria-label="Access rules" onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const saved = await api.patch<RulesData>(base, Object.fromEntries(ACTIONS.map((a) => [a, rules[a].trim() || null])));
          toast(saved.warnings.length ? `Rules saved, with ${saved.warnings.length} index warning(s)` : 'Rules saved');
          onSaved();
        } catch (err) {
          if (err instanceof ApiError && err.code === 'rule_invalid') {
            setError({ action: String(err.body.action), position: Number(err.body.position), message: err.message });
          } else {
            setError({ action: '', position: 0, message: (err as Error).message });
          }
        } finally {
          setBusy(false);
        }
      }}>
        <p class="muted">
          {users
            ? 'Who may read and change the project\'s users. Empty: everyone reads users, each user changes their own profile. Compiled to policies of the users table, so raw SQL obeys them too; sign-in and the user\'s own account (/me) are not governed by them.'
            : "Empty: the collection's row-level-security mode decides. Compiled to PostgreSQL policies, so raw SQL obeys them too."}
        </p>
        {ACTIONS.map((a) => (
          <div class="field" key={a}>
            <label for={`rule-${a}`}>{a} rule</label>
            <input id={`rule-${a}`} class="mono" value={rules[a]} placeholder={users && a === 'create' ? 'Users are created by signing up (sign-in settings), not by a rule' : HINTS[a]}
              disabled={users && a === 'create'}
              aria-describedby={[error?.action === a ? 'rule-error' : '', broken.has(a) ? `rule-broken-${a}` : ''].filter(Boolean).join(' ') || undefined}
              aria-invalid={error?.action === a ? 'true' : undefined} onInput={(e) => setRules({ ...rules, [a]: e.currentTarget.value })} />
            {broken.has(a) && <p id={`rule-broken-${a}`} class="warn">Broken: {broken.get(a)}</p>}
            {error?.action === a && <Pointer text={rules[a]} position={error.position} />}
          </div>
        ))}
        {error && <p id="rule-error" class="form-error" role="alert">{error.message}</p>}
        <div class="actions"><button class="btn primary" disabled={busy || !!cannotSave} title={cannotSave}>{busy ? 'Saving…' : 'Save rules'}</button></div>
        <RoleNote what="Changing rules" reason={cannotSave} />
      </form>
      {data.warnings.length > 0 && (
        <section aria-label="Index warnings">
          <h3>Index warnings</h3>
          <ul>
            {data.warnings.map((w, i) => (
              <li key={i} class="warning">
                <strong>{w.action}</strong>: {w.message}
                {w.plan && <details><summary>Plan</summary><pre class="mono">{w.plan}</pre></details>}
              </li>
            ))}
          </ul>
        </section>
      )}
      {users ? <p class="muted">The preview is not available for the users collection: save the rule, then try it as the user.</p> : <RulePreview base={base} projectId={projectId} rules={rules} />}
      <details>
        <summary>Compiled SQL and policies (read-only)</summary>
        {Object.keys(data.sql).length === 0 && <p class="muted">No rules: the collection keeps its mode's policies.</p>}
        {Object.entries(data.sql).map(([a, text]) => (
          <div key={a}><h4>{a}</h4><pre class="mono" aria-label={`Compiled ${a} rule`}>{text}</pre></div>
        ))}
        <table class="grid">
          <thead><tr><th scope="col">Policy</th><th scope="col">Command</th><th scope="col">Roles</th><th scope="col">USING</th><th scope="col">WITH CHECK</th></tr></thead>
          <tbody>
            {data.policies.map((p) => (
              <tr key={p.name}><td>{p.name}</td><td>{p.command}</td><td>{p.roles.join(', ')}</td><td class="mono">{p.using ?? '—'}</td><td class="mono">{p.withCheck ?? '—'}</td></tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}

/** The rule text with a caret under the 1-based position the server pointed at. */
function Pointer({ text, position }: { text: string; position: number }) {
  const at = Math.max(0, Math.min(text.length, position - 1));
  return (
    <pre class="mono rule-pointer" aria-label={`Error at character ${position}`}>
      {text}
      {'\n'}
      {' '.repeat(at)}^
    </pre>
  );
}

function RulePreview({ base, projectId, rules }: { base: string; projectId: string; rules: Record<Action, string> }) {
  const users = useLoad((signal) => api.get<{ items: Array<{ _id: string; email: string }> }>(`${projectPath(projectId, 'users')}?page=1&limit=50`, signal), [projectId]);
  const [action, setAction] = useState<Action>('list');
  const [userId, setUserId] = useState('');
  const [documentId, setDocumentId] = useState('');
  const [data, setData] = useState('{}');
  const [result, setResult] = useState<Preview>();
  const [error, setError] = useState<string>();
  const needsDoc = action === 'view' || action === 'update' || action === 'delete';
  const needsData = action === 'create' || action === 'update';
  return (
    <section aria-label="Test a rule">
      <h3>Test as a user</h3>
      <form class="inline-form" onSubmit={async (e) => {
        e.preventDefault();
        setError(undefined);
        setResult(undefined);
        try {
          const body: Record<string, unknown> = { action, rule: rules[action].trim() || null, userId: userId || null };
          if (needsDoc) body.documentId = documentId.trim();
          if (needsData) body.data = JSON.parse(data);
          setResult(await api.post<Preview>(`${base}/preview`, body));
        } catch (err) {
          setError((err as Error).message);
        }
      }}>
        <Select label="Action" value={action} options={[...ACTIONS]} onChange={(v) => setAction(v as Action)} />
        <Select label="As user" value={userId} options={[{ value: '', label: 'Anonymous (no token)' }, ...(users.data?.items ?? []).map((u) => ({ value: u._id, label: u.email }))]} onChange={setUserId} />
        {needsDoc && (
          <div class="field"><label for="preview-doc">Document id</label><input id="preview-doc" class="mono" value={documentId} onInput={(e) => setDocumentId(e.currentTarget.value)} /></div>
        )}
        {needsData && (
          <div class="field"><label for="preview-data">Data (JSON)</label><input id="preview-data" class="mono" value={data} onInput={(e) => setData(e.currentTarget.value)} /></div>
        )}
        <button class="btn">Test</button>
      </form>
      <p class="muted">Runs the rule in the field above (saved or not) under the real policies, then rolls back.</p>
      {error && <p class="form-error" role="alert">{error}</p>}
      {result && (
        <p role="status" aria-label="Preview result">
          <strong>{result.allowed ? 'Allowed' : 'Denied'}</strong>
          {result.reason === 'hidden' && ' (the read rule hides it)'}
          {result.reason === 'denied' && ' (the rule refuses this write)'}
          {result.count !== undefined && ` — sees ${result.count} document${result.count === 1 ? '' : 's'}`}
        </p>
      )}
    </section>
  );
}
