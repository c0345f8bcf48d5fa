/**
 * Functions (docs/functions.md, "The console"): a project's server-side functions with their
 * kind, trigger, active version and the last 24 hours' invocations, errors, p50 and p99; a new
 * function (name, kind, the trigger fields of that kind); one function's editor (CodeMirror,
 * JavaScript or TypeScript, completions for `plinth`), deploy (a new version), its versions with
 * rollback, enable/disable, delete, "run with this body" and its live log; and the project's
 * function secrets (names only: a value is written, never read back). The dashboard function
 * routes do the work.
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime, plural } from '../lib/format';
import { href, navigate } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, PageHead, Select } from '../components/ui';
import { RoleNote } from '../components/ui';
import { lazy } from '../components/lazy';
import type { ProjectNames } from '../components/code-editor';
import type { SectionProps } from './project-shell';
import { useGate } from '../lib/permissions';

// The editors (CodeMirror) are chunks of their own, loaded when a function is opened: the list
// and the rest of the console never fetch them.
const CodeEditor = lazy<{ value: string; onChange: (text: string) => void; label: string; language: 'js' | 'ts'; names: ProjectNames }>(() => import('../components/code-editor'));
const JsonEditor = lazy<{ value: string; onChange: (text: string) => void; label: string }>(() => import('../components/json-editor'));

const KINDS = [
  { value: 'http', label: 'HTTP (/api/functions/:name)' },
  { value: 'before', label: 'Before a collection write' },
  { value: 'after', label: 'After a change or an auth event' },
  { value: 'auth', label: 'Auth hook' },
  { value: 'schedule', label: 'Schedule (cron)' },
] as const;
type Kind = (typeof KINDS)[number]['value'];
const BEFORE_EVENTS = ['create', 'update', 'delete'];
const AFTER_EVENTS = ['create', 'update', 'delete', 'restore'];
const AUTH_EVENTS = ['sign-up', 'sign-in', 'delete'];
const AUTH_HOOKS = ['before-sign-up', 'token-claims'];
/** How often the open function's log is read again. */
const POLL_MS = 3000;

interface Fn {
  id: string;
  name: string;
  kind: Kind;
  trigger: Record<string, unknown>;
  enabled: boolean;
  version: number;
  versions: number;
  language: 'js' | 'ts';
  hash: string;
  createdAt: string;
  updatedAt: string;
}
interface Version { version: number; language: 'js' | 'ts'; hash: string; active: boolean; createdAt: string }
interface FnDetail extends Fn { source: string; history: Version[] }
interface Stats { name: string; invocations: number; errors: number; p50Ms: number | null; p99Ms: number | null }
interface LogLine { level: string; text: string; at: number }
interface Invocation { id: string; version: number; trigger: string; ok: boolean; errorCode: string | null; error: string | null; durationMs: number; cpuMs: number; logs: LogLine[]; logsDropped: number; at: string }
interface RunResult { ok: boolean; value?: unknown; error?: { code: string; status: number; message: string }; logs: LogLine[]; logsDropped: number; durationMs: number; cpuMs: number }
interface Secret { name: string; updatedAt: string }

/** A trigger in words: what the list and the function's page show. */
export function triggerText(kind: string, t: Record<string, unknown>): string {
  const events = (v: unknown) => (Array.isArray(v) && v.length ? v.join(', ') : 'all events');
  if (kind === 'http') return 'HTTP';
  if (kind === 'schedule') return `cron ${String(t.cron ?? '')}`;
  if (kind === 'auth') return String(t.event ?? '');
  if (Array.isArray(t.auth)) return `auth: ${events(t.auth)}`;
  return `${String(t.collection ?? '')}: ${events(t.events)}`;
}

const ms = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `${Math.round(n * 10) / 10} ms`);

const HEADER = `// export default async (event, plinth) => …
// plinth.data.collection(name).get/list/count/create/update/delete/restore (the caller's rules);
// plinth.data.service.collection(name)… (the service's); plinth.mail.send({to, subject, text|html} or {to, templateName, variables});
// plinth.fetch(url, init); plinth.env.NAME (secrets);
// plinth.caller; plinth.response(body, {status, headers}); throw new PlinthError(message, {status, code}).
`;

/** A first source for a new function of this kind. */
export function template(kind: Kind, language: 'js' | 'ts'): string {
  const ts = language === 'ts';
  const arg = (name: string, type: string) => (ts ? `${name}: ${type}` : name);
  switch (kind) {
    case 'http':
      return `${HEADER}export default async (${arg('req', '{ method: string; query: Record<string, string>; body: any }')}, ${arg('plinth', 'any')}) => {
  console.log('called with', req.body);
  return { hello: req.body?.name ?? req.query.name ?? 'world' };
};
`;
    case 'before':
      return `${HEADER}export default async (${arg('event', 'any')}, ${arg('plinth', 'any')}) => {
  // Throw a PlinthError to refuse the write; return nothing to let it through.
  console.log(event.event, event.collection);
};
`;
    case 'auth':
      return `${HEADER}export default async (${arg('event', 'any')}, ${arg('plinth', 'any')}) => {
  console.log(event);
};
`;
    default:
      return `${HEADER}export default async (${arg('event', 'any')}, ${arg('plinth', 'any')}) => {
  console.log('event', event);
};
`;
  }
}

export default function Functions({ project, collections, rest }: SectionProps) {
  const name = rest[0];
  return name ? (
    <FunctionPage key={name} projectId={project._id} name={decodeURIComponent(name)} collections={collections.map((c) => c.name)} />
  ) : (
    <FunctionList projectId={project._id} collections={collections.map((c) => c.name).filter((n) => n.toLowerCase() !== 'users')} />
  );
}

function FunctionList({ projectId, collections }: { projectId: string; collections: string[] }) {
  const base = projectPath(projectId, 'functions');
  const list = useLoad(async (signal) => {
    const [fns, stats] = await Promise.all([api.get<Fn[]>(base, signal), api.get<Stats[]>(projectPath(projectId, 'functions-stats'), signal)]);
    return { fns, stats: new Map(stats.map((s) => [s.name, s])) };
  }, [base]);
  const [creating, setCreating] = useState(false);
  const cannotCreate = useGate(`POST /api/projects/:projectId/functions`);
  return (
    <section aria-labelledby="functions-title" class="functions">
      <PageHead title="Functions">
        <button type="button" class="btn primary" disabled={!!cannotCreate} title={cannotCreate} onClick={() => setCreating(true)}>New function</button>
      </PageHead>
      <RoleNote what="Creating functions" reason={cannotCreate} />
      <p class="muted">
        The project's own code, run in Plinth's sandbox: HTTP functions at <code>/api/functions/:name</code>, hooks on collection writes and sign-up, and schedules.
      </p>
      <h2 id="functions-title" class="sr-only">Functions of the project</h2>
      <Loadable state={list}>
        {({ fns, stats }) => fns.length === 0 ? (
          <Empty title="No function yet"><p>Create one, or deploy a folder with <code>plinth functions deploy</code>.</p></Empty>
        ) : (
          <div class="table-wrap" tabIndex={0} role="group" aria-label="Functions table">
            <table class="grid">
              <caption class="sr-only">Functions, with the last 24 hours' invocations</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Trigger</th><th scope="col">Version</th><th scope="col">State</th>
                  <th scope="col">Invocations (24 h)</th><th scope="col">Errors</th><th scope="col">p50</th><th scope="col">p99</th>
                </tr>
              </thead>
              <tbody>
                {fns.map((f) => {
                  const s = stats.get(f.name);
                  return (
                    <tr key={f.id}>
                      <td><a href={href('p', projectId, 'functions', f.name)} class="mono">{f.name}</a></td>
                      <td>{f.kind}</td>
                      <td class="mono">{triggerText(f.kind, f.trigger)}</td>
                      <td>v{f.version} <span class="muted">of {f.versions}</span></td>
                      <td><span class={`badge ${f.enabled ? 'delivered' : 'failed'}`}>{f.enabled ? 'enabled' : 'disabled'}</span></td>
                      <td>{s?.invocations ?? 0}</td>
                      <td>{s?.errors ?? 0}</td>
                      <td>{ms(s?.p50Ms)}</td>
                      <td>{ms(s?.p99Ms)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </Loadable>
      <Secrets projectId={projectId} />
      {creating && (
        <CreateDialog base={base} collections={collections} onClose={() => setCreating(false)}
          onCreated={(f) => navigate(href('p', projectId, 'functions', f.name))} />
      )}
    </section>
  );
}

function toggle(list: string[], v: string, on: boolean): string[] {
  return on ? [...list.filter((x) => x !== v), v] : list.filter((x) => x !== v);
}

function CreateDialog({ base, collections, onClose, onCreated }: { base: string; collections: string[]; onClose: () => void; onCreated: (f: Fn) => void }) {
  const id = useId();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<Kind>('http');
  const [language, setLanguage] = useState<'js' | 'ts'>('ts');
  const [collection, setCollection] = useState(collections[0] ?? '');
  const [events, setEvents] = useState<string[]>([]);
  const [afterOn, setAfterOn] = useState<'collection' | 'auth'>('collection');
  const [authEvents, setAuthEvents] = useState<string[]>([]);
  const [hook, setHook] = useState(AUTH_HOOKS[0]!);
  const [cron, setCron] = useState('0 * * * *');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const trigger = (): Record<string, unknown> => {
    if (kind === 'before') return { collection, ...(events.length ? { events } : {}) };
    if (kind === 'after') return afterOn === 'auth' ? { auth: authEvents.length ? authEvents : AUTH_EVENTS } : { collection, ...(events.length ? { events } : {}) };
    if (kind === 'auth') return { event: hook };
    if (kind === 'schedule') return { cron: cron.trim() };
    return {};
  };
  const onCollection = kind === 'before' || (kind === 'after' && afterOn === 'collection');
  return (
    <Dialog title="New function" onClose={onClose}>
      <form onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(undefined);
        try {
          const f = await api.post<Fn>(base, { name: name.trim(), kind, language, trigger: trigger(), source: template(kind, language) });
          toast(`Function ${f.name} created (version 1)`);
          onClose();
          onCreated(f);
        } catch (err) {
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}>
        <div class="field">
          <label for={`${id}-name`}>Name</label>
          <input id={`${id}-name`} class="mono" required maxLength={63} pattern="[a-z0-9][a-z0-9_\-]{0,62}" aria-describedby={`${id}-name-hint`}
            value={name} onInput={(e) => setName(e.currentTarget.value)} autoComplete="off" />
          <small id={`${id}-name-hint`} class="hint">Lower case letters, digits, - and _.</small>
        </div>
        <Select label="Kind" value={kind} options={[...KINDS]} onChange={(v) => { setKind(v as Kind); setEvents([]); }} />
        <Select label="Language" value={language} options={[{ value: 'ts', label: 'TypeScript' }, { value: 'js', label: 'JavaScript' }]} onChange={(v) => setLanguage(v as 'js' | 'ts')} />
        {kind === 'after' && (
          <fieldset class="choices">
            <legend>Runs after</legend>
            <label class="check"><input type="radio" name={`${id}-after`} checked={afterOn === 'collection'} onChange={() => setAfterOn('collection')} /> a change of a collection</label>
            <label class="check"><input type="radio" name={`${id}-after`} checked={afterOn === 'auth'} onChange={() => setAfterOn('auth')} /> an auth event</label>
          </fieldset>
        )}
        {onCollection && (
          <>
            {collections.length === 0 ? <p class="warn">No collection yet: create one first.</p> : <Select label="Collection" value={collection} options={collections} onChange={setCollection} />}
            <fieldset class="choices">
              <legend>Events (none ticked: all)</legend>
              {(kind === 'before' ? BEFORE_EVENTS : AFTER_EVENTS).map((ev) => (
                <label class="check" key={ev}><input type="checkbox" checked={events.includes(ev)} onChange={(e) => setEvents(toggle(events, ev, e.currentTarget.checked))} /> {ev}</label>
              ))}
            </fieldset>
          </>
        )}
        {kind === 'after' && afterOn === 'auth' && (
          <fieldset class="choices">
            <legend>Auth events (none ticked: all)</legend>
            {AUTH_EVENTS.map((ev) => (
              <label class="check" key={ev}><input type="checkbox" checked={authEvents.includes(ev)} onChange={(e) => setAuthEvents(toggle(authEvents, ev, e.currentTarget.checked))} /> {ev}</label>
            ))}
          </fieldset>
        )}
        {kind === 'auth' && <Select label="Auth hook" value={hook} options={AUTH_HOOKS} onChange={setHook} />}
        {kind === 'schedule' && (
          <div class="field">
            <label for={`${id}-cron`}>Cron expression</label>
            <input id={`${id}-cron`} class="mono" required value={cron} aria-describedby={`${id}-cron-hint`} onInput={(e) => setCron(e.currentTarget.value)} />
            <small id={`${id}-cron-hint`} class="hint">Five fields, UTC: minute hour day-of-month month day-of-week.</small>
          </div>
        )}
        {error && <p class="form-error" role="alert">{error}</p>}
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Cancel</button>
          <button type="submit" class="btn primary" disabled={busy || !name.trim() || (onCollection && !collection)}>{busy ? 'Creating…' : 'Create function'}</button>
        </div>
      </form>
    </Dialog>
  );
}

function FunctionPage({ projectId, name, collections }: { projectId: string; name: string; collections: string[] }) {
  const base = projectPath(projectId, 'functions', name);
  const fn = useLoad((signal) => api.get<FnDetail>(base, signal), [base]);
  // The secrets' names, for completions after `plinth.env.` (a failed read only means none).
  const [secrets, setSecrets] = useState<string[]>([]);
  useEffect(() => {
    const ctl = new AbortController();
    api.get<Secret[]>(projectPath(projectId, 'function-secrets'), ctl.signal).then((list) => setSecrets(list.map((s) => s.name)), () => undefined);
    return () => ctl.abort();
  }, [projectId]);
  return (
    <section aria-labelledby="function-title" class="function-page">
      <p><a href={href('p', projectId, 'functions')}>← All functions</a></p>
      <Loadable state={fn}>
        {(f) => <FunctionView projectId={projectId} base={base} f={f} reload={fn.reload} names={{ collections, secrets }} />}
      </Loadable>
    </section>
  );
}

function FunctionView({ projectId, base, f, reload, names }: { projectId: string; base: string; f: FnDetail; reload: () => void; names: ProjectNames }) {
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState(false);
  const cannotChange = useGate(`PATCH /api/projects/:projectId/functions/:name`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/functions/:name`);
  return (
    <>
      <PageHead title={`Function ${f.name}`}>
        <button type="button" class="btn" disabled={busy || !!cannotChange} title={cannotChange} onClick={async () => {
          setBusy(true);
          try {
            await api.patch(base, { enabled: !f.enabled });
            toast(f.enabled ? 'Function disabled' : 'Function enabled');
            reload();
          } catch (err) {
            toastError(err);
          } finally {
            setBusy(false);
          }
        }}>{f.enabled ? 'Disable' : 'Enable'}</button>
        <button type="button" class="btn danger" disabled={!!cannotDelete} title={cannotDelete} onClick={() => setDeleting(true)}>Delete</button>
      </PageHead>
      <RoleNote what="Deploying, enabling, rolling back, running and deleting this function" reason={cannotChange} />
      <h2 id="function-title" class="sr-only">{f.name}</h2>
      <dl class="meta">
        <dt>Kind</dt><dd>{f.kind}</dd>
        <dt>Trigger</dt><dd class="mono">{triggerText(f.kind, f.trigger)}</dd>
        <dt>Active version</dt><dd>v{f.version} of {f.versions} · {f.language === 'ts' ? 'TypeScript' : 'JavaScript'}</dd>
        <dt>State</dt><dd><span class={`badge ${f.enabled ? 'delivered' : 'failed'}`}>{f.enabled ? 'enabled' : 'disabled'}</span></dd>
        {f.kind === 'http' && <><dt>URL</dt><dd class="mono">/api/functions/{f.name}</dd></>}
      </dl>
      <SourceEditor key={`${f.version}:${f.hash}`} base={base} f={f} onDeployed={reload} names={names} />
      <Versions base={base} f={f} onChanged={reload} />
      <RunPanel base={base} f={f} />
      <LiveLog base={base} />
      {deleting && (
        <Confirm title={`Delete ${f.name}?`} message={<p>The function and all its versions will be deleted. Its log goes with it.</p>} action="Delete function" typed={f.name}
          onConfirm={async () => { await api.del(base); toast('Function deleted'); navigate(href('p', projectId, 'functions')); }} onClose={() => setDeleting(false)} />
      )}
    </>
  );
}

/** The editor with its own state: typing re-renders this part only. A new active version remounts it (its key). */
function SourceEditor({ base, f, onDeployed, names }: { base: string; f: FnDetail; onDeployed: () => void; names: ProjectNames }) {
  const [source, setSource] = useState(f.source);
  const [language, setLanguage] = useState<'js' | 'ts'>(f.language);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const changed = source !== f.source || language !== f.language;
  const cannotDeploy = useGate(`PATCH /api/projects/:projectId/functions/:name`);
  return (
    <section aria-labelledby="fn-source" class="fn-source">
      <div class="toolbar">
        <h3 id="fn-source">Source</h3>
        <Select label="Language" value={language} options={[{ value: 'ts', label: 'TypeScript' }, { value: 'js', label: 'JavaScript' }]} onChange={(v) => setLanguage(v as 'js' | 'ts')} />
      </div>
      <CodeEditor value={source} onChange={setSource} label={`Source of ${f.name}`} language={language} names={names} />
      {error && <p class="form-error" role="alert">{error}</p>}
      <div class="actions">
        {changed && <span class="muted">Not deployed yet</span>}
        <button type="button" class="btn" disabled={!changed || busy} onClick={() => { setSource(f.source); setLanguage(f.language); setError(undefined); }}>Revert</button>
        <button type="button" class="btn primary" disabled={!changed || busy || !!cannotDeploy} title={cannotDeploy} onClick={async () => {
          setBusy(true);
          setError(undefined);
          try {
            const next = await api.patch<Fn>(base, { source, language });
            toast(`Deployed version ${next.version}`);
            onDeployed();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}>{busy ? 'Deploying…' : 'Deploy'}</button>
      </div>
    </section>
  );
}

function Versions({ base, f, onChanged }: { base: string; f: FnDetail; onChanged: () => void }) {
  const [viewing, setViewing] = useState<{ version: number; source: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const cannotRollBack = useGate(`POST /api/projects/:projectId/functions/:name/rollback`);
  const history = [...f.history].sort((a, b) => b.version - a.version);
  return (
    <section aria-labelledby="fn-versions">
      <h3 id="fn-versions">Versions</h3>
      <ul class="versions">
        {history.map((v) => (
          <li key={v.version} class="version">
            <span><strong>v{v.version}</strong> <span class="muted">{v.language} · {dateTime(v.createdAt)} · <span class="mono" title={v.hash}>{v.hash.slice(0, 10)}</span></span></span>
            {v.active ? <span class="badge delivered">active</span> : (
              <span class="row-actions">
                <button type="button" class="btn" aria-label={`View version ${v.version}`} onClick={async () => {
                  try {
                    setViewing(await api.get<{ version: number; source: string }>(`${base}/versions/${v.version}`));
                  } catch (err) {
                    toastError(err);
                  }
                }}>View</button>
                <button type="button" class="btn" disabled={busy || !!cannotRollBack} title={cannotRollBack} aria-label={`Roll back to version ${v.version}`} onClick={async () => {
                  setBusy(true);
                  try {
                    await api.post(`${base}/rollback`, { version: v.version });
                    toast(`Version ${v.version} is active`);
                    onChanged();
                  } catch (err) {
                    toastError(err);
                  } finally {
                    setBusy(false);
                  }
                }}>Roll back</button>
              </span>
            )}
          </li>
        ))}
      </ul>
      {viewing && (
        <Dialog title={`Version ${viewing.version}`} onClose={() => setViewing(null)} wide>
          <pre class="mono source-view" tabIndex={0} aria-label={`Source of version ${viewing.version}`}>{viewing.source}</pre>
        </Dialog>
      )}
    </section>
  );
}

/** The event a function of this kind is tried with first. */
function sampleEvent(f: Fn): unknown {
  if (f.kind === 'http') return { method: 'POST', path: '', query: {}, headers: {}, body: { name: 'Ada' } };
  if (f.kind === 'schedule') return { cron: f.trigger.cron };
  return {};
}

function LogLines({ lines, dropped }: { lines: LogLine[]; dropped: number }) {
  if (lines.length === 0 && !dropped) return <p class="muted small">No log line.</p>;
  return (
    <ol class="log-lines mono small">
      {lines.map((l, i) => <li key={i} class={`log-${l.level}`}><span class="log-level">{l.level}</span> <span class="wrap-anywhere">{l.text}</span></li>)}
      {dropped > 0 && <li class="muted">… {plural(dropped, 'more line')} not kept</li>}
    </ol>
  );
}

function RunPanel({ base, f }: { base: string; f: Fn }) {
  const id = useId();
  const [body, setBody] = useState(JSON.stringify(sampleEvent(f), null, 2));
  const [as, setAs] = useState('anonymous');
  const cannotRun = useGate(`POST /api/projects/:projectId/functions/:name/run`);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<RunResult>();
  const [error, setError] = useState<string>();
  return (
    <section aria-labelledby={`${id}-title`} class="run-panel">
      <h3 id={`${id}-title`}>Run with this body</h3>
      <p class="muted">Runs the active version with this event{f.kind === 'http' ? ' (the request the function sees)' : ''}. Writes are real.</p>
      <JsonEditor value={body} onChange={setBody} label="Event (JSON)" />
      <div class="toolbar">
        <Select label="Acting as" value={as} options={[{ value: 'anonymous', label: 'Anonymous (access rules)' }, { value: 'service', label: 'The service' }]} onChange={setAs} />
        <button type="button" class="btn primary" disabled={busy || !!cannotRun} title={cannotRun} onClick={async () => {
          setError(undefined);
          let event: unknown;
          try {
            event = JSON.parse(body);
          } catch (err) {
            setError(`The body is not JSON: ${(err as Error).message}`);
            return;
          }
          setBusy(true);
          try {
            setResult(await api.post<RunResult>(`${base}/run`, { event, as }));
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}>{busy ? 'Running…' : 'Run'}</button>
      </div>
      {error && <p class="form-error" role="alert">{error}</p>}
      {result && (
        <div role="status" aria-label="Run result" class="run-result">
          <p>
            <span class={`badge ${result.ok ? 'delivered' : 'failed'}`}>{result.ok ? 'ok' : 'error'}</span>{' '}
            <span class="muted">{ms(result.durationMs)} wall · {ms(result.cpuMs)} CPU</span>
          </p>
          {result.ok ? (
            <pre class="mono wrap-anywhere" aria-label="Returned value">{JSON.stringify(result.value, null, 2)}</pre>
          ) : (
            <p class="wrap-anywhere" aria-label="Error"><strong class="mono">{result.error?.code}</strong> ({result.error?.status}): {result.error?.message}</p>
          )}
          <h4>Logs</h4>
          <LogLines lines={result.logs} dropped={result.logsDropped} />
        </div>
      )}
    </section>
  );
}

function LiveLog({ base }: { base: string }) {
  const [items, setItems] = useState<Invocation[] | null>(null);
  const [error, setError] = useState<string>();
  const [paused, setPaused] = useState(false);
  useEffect(() => {
    if (paused) return;
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ctl = new AbortController();
    const tick = async () => {
      try {
        const page = await api.get<{ invocations: Invocation[] }>(`${base}/invocations?limit=30`, ctl.signal);
        if (stop) return;
        setItems(page.invocations);
        setError(undefined);
      } catch (err) {
        if (stop) return;
        setError((err as Error).message);
      }
      // Only while the page is visible: a background tab does not keep asking.
      if (!stop) timer = setTimeout(tick, document.hidden ? POLL_MS * 5 : POLL_MS);
    };
    void tick();
    return () => {
      stop = true;
      ctl.abort();
      clearTimeout(timer);
    };
  }, [base, paused]);
  return (
    <section aria-labelledby="fn-log" class="live-log">
      <div class="toolbar">
        <h3 id="fn-log">Live log</h3>
        <span class="muted small">{paused ? 'paused' : `every ${POLL_MS / 1000} s, newest first`}</span>
        <button type="button" class="btn ghost" onClick={() => setPaused(!paused)}>{paused ? 'Resume' : 'Pause'}</button>
      </div>
      {error && <p class="form-error" role="alert">{error}</p>}
      {items === null ? <p class="muted">Loading…</p> : items.length === 0 ? <p class="muted">No invocation yet.</p> : (
        <ul class="invocations" aria-label="Invocations">
          {items.map((inv) => (
            <li key={inv.id} class="invocation">
              <p>
                <span class={`badge ${inv.ok ? 'delivered' : 'failed'}`}>{inv.ok ? 'ok' : 'error'}</span>{' '}
                <span class="muted">{dateTime(inv.at)} · {inv.trigger} · v{inv.version} · {ms(inv.durationMs)} · {ms(inv.cpuMs)} CPU</span>
              </p>
              {!inv.ok && <p class="wrap-anywhere"><strong class="mono">{inv.errorCode}</strong> {inv.error}</p>}
              <LogLines lines={inv.logs} dropped={inv.logsDropped} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Secrets({ projectId }: { projectId: string }) {
  const id = useId();
  const base = projectPath(projectId, 'function-secrets');
  const list = useLoad((signal) => api.get<Secret[]>(base, signal), [base]);
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [deleting, setDeleting] = useState<string | null>(null);
  const cannotSet = useGate(`PUT /api/projects/:projectId/function-secrets/:name`);
  const cannotDelete = useGate(`DELETE /api/projects/:projectId/function-secrets/:name`);
  return (
    <section aria-labelledby={`${id}-title`} class="secrets">
      <h2 id={`${id}-title`}>Secrets</h2>
      <p class="muted">Every function reads them as <code>plinth.env.NAME</code>. Values are encrypted and never shown again: set a new value to replace one.</p>
      <Loadable state={list}>
        {(secrets) => secrets.length === 0 ? <p class="muted">No secret yet.</p> : (
          <ul class="secret-list" aria-label="Secret names">
            {secrets.map((s) => (
              <li key={s.name} class="secret">
                <span class="mono wrap-anywhere">{s.name}</span> <span class="muted small">set {dateTime(s.updatedAt)}</span>
                <span class="row-actions">
                  <button type="button" class="btn" disabled={!!cannotSet} title={cannotSet} aria-label={`Replace the value of ${s.name}`} onClick={() => { setName(s.name); setValue(''); document.getElementById(`${id}-value`)?.focus(); }}>Replace</button>
                  <button type="button" class="btn danger" disabled={!!cannotDelete} title={cannotDelete} aria-label={`Delete ${s.name}`} onClick={() => setDeleting(s.name)}>Delete</button>
                </span>
              </li>
            ))}
          </ul>
        )}
      </Loadable>
      <form class="inline-form" aria-label="Set a secret" onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await api.put(`${base}/${encodeURIComponent(name.trim())}`, { value });
          toast(`Secret ${name.trim()} set`);
          setName('');
          setValue('');
          list.reload();
        } catch (err) {
          toastError(err);
        } finally {
          setBusy(false);
        }
      }}>
        <div class="field">
          <label for={`${id}-name`}>Secret name</label>
          <input id={`${id}-name`} class="mono" required pattern="[A-Z_][A-Z0-9_]{0,63}" placeholder="STRIPE_KEY" autoComplete="off" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for={`${id}-value`}>Value</label>
          <input id={`${id}-value`} type="password" required autoComplete="new-password" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </div>
        <button type="submit" class="btn primary" disabled={busy || !name.trim() || !value || !!cannotSet} title={cannotSet}>Set secret</button>
      </form>
      <RoleNote what="Setting and deleting secrets" reason={cannotSet} />
      {deleting && (
        <Confirm title={`Delete the secret ${deleting}?`} message={<p>Functions reading <code>plinth.env.{deleting}</code> will get nothing.</p>} action="Delete secret"
          onConfirm={async () => { await api.del(`${base}/${encodeURIComponent(deleting)}`); toast('Secret deleted'); list.reload(); }} onClose={() => setDeleting(null)} />
      )}
    </section>
  );
}
