/** The operator's projects: list, usage at a glance, create (keys shown once). */
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { bytes, plural } from '../lib/format';
import { href } from '../lib/router';
import { me } from '../lib/session';
import { toast } from '../lib/toast';
import type { ProjectSummary } from '../lib/types';
import { useLoad } from '../lib/use-load';
import { Dialog, Empty, Field, Loadable, Meter, PageHead, SecretOnce } from '../components/ui';

interface Created extends ProjectSummary {
  publishableKey: string;
  secretKey: string;
}

function CreateProject({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [siteUrl, setSiteUrl] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const [created, setCreated] = useState<Created>();
  if (created) {
    return (
      <Dialog title={`Project “${created.name}” created`} onClose={onClose}>
        <div class="dialog-body">
          <SecretOnce label="Publishable key" value={created.publishableKey} />
          <SecretOnce label="Secret key" value={created.secretKey} />
        </div>
        <div class="actions">
          <a class="btn primary" href={href('p', created._id, 'collections')} onClick={onClose}>Open the project</a>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title="New project" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(undefined);
          try {
            const p = await api.post<Created>('/api/projects', { name, description: description || undefined, siteUrl: siteUrl || undefined });
            setCreated(p);
            toast('Project created');
            onCreated();
          } catch (err) {
            setError((err as Error).message);
          } finally {
            setBusy(false);
          }
        }}
      >
        {error && <p class="form-error" role="alert">{error}</p>}
        <Field label="Name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <Field label="Description (optional)" maxLength={500} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        <Field label="Site URL (optional)" type="url" placeholder="https://app.example.com" hint="Where your app runs: social sign-in and mail links go there." value={siteUrl} onInput={(e) => setSiteUrl(e.currentTarget.value)} />
        <div class="actions">
          <button type="button" class="btn" onClick={onClose}>Cancel</button>
          <button class="btn primary" disabled={busy}>{busy ? 'Creating…' : 'Create project'}</button>
        </div>
      </form>
    </Dialog>
  );
}

export function Projects() {
  const state = useLoad(() => api.get<ProjectSummary[]>('/api/projects'), []);
  const [creating, setCreating] = useState(false);
  const verified = me.value?.isVerified !== false;
  return (
    <main id="main" tabIndex={-1} class="page">
      <PageHead title="Projects">
        <button type="button" class="btn primary" disabled={!verified} onClick={() => setCreating(true)}>New project</button>
      </PageHead>
      {!verified && <p class="notice">Verify your email to create projects: <a href="#/verify">enter the code</a>.</p>}
      <Loadable state={state}>
        {(projects) =>
          projects.length === 0 ? (
            <Empty title="No projects yet">
              <p>A project holds collections, end users, files and mail settings, with its own API keys.</p>
            </Empty>
          ) : (
            <ul class="cards" aria-label="Projects">
              {projects.map((p) => (
                <li class="card" key={p._id}>
                  <h2><a href={href('p', p._id, 'collections')}>{p.name}</a></h2>
                  {p.role && <p class="muted small">Your role: {p.role}</p>}
                  {p.description && <p class="muted">{p.description}</p>}
                  <p class="muted">{plural(p.collectionsCount, 'collection')}</p>
                  <Meter label="Database" used={p.metrics.database.used} limit={p.metrics.database.limit} format={bytes} />
                  <Meter label="Storage" used={p.metrics.storage.used} limit={p.metrics.storage.limit} format={bytes} />
                </li>
              ))}
            </ul>
          )
        }
      </Loadable>
      {creating && <CreateProject onClose={() => setCreating(false)} onCreated={state.reload} />}
    </main>
  );
}
