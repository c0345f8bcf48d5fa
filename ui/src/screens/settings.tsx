/** Project settings: general, authentication, sign-in providers, allowed origins, API keys (rotate), deletion. */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { navigate } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { Check, Confirm, Field, PageHead, SecretOnce } from '../components/ui';
import type { SectionProps } from './project-shell';
import { needs } from '../lib/roles';
import { SignInProviders } from './sign-in-providers';

export default function Settings({ project, reload }: SectionProps) {
  const [s, setS] = useState({
    name: project.name,
    description: project.description,
    siteUrl: project.siteUrl ?? '',
    origins: project.allowedDomains.join('\n'),
    isAuthEnabled: project.isAuthEnabled,
    requireEmailVerification: project.requireEmailVerification,
  });
  const [busy, setBusy] = useState(false);
  const [rotate, setRotate] = useState<'publishable' | 'secret' | null>(null);
  const [newKey, setNewKey] = useState<{ keyType: string; apiKey: string } | null>(null);
  const [deleting, setDeleting] = useState(false);
  const notAdmin = needs(project.role, 'admin');
  const notOwner = needs(project.role, 'owner');
  return (
    <>
      <PageHead title="Settings" />
      {notAdmin && <p class="notice" id="settings-role">You can read these settings. Changing them: {notAdmin}</p>}
      <form onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        try {
          await api.patch(projectPath(project._id), {
            name: s.name,
            description: s.description,
            siteUrl: s.siteUrl,
            allowedDomains: s.origins.split(/[\n,]/).map((x) => x.trim()).filter(Boolean),
            isAuthEnabled: s.isAuthEnabled,
            requireEmailVerification: s.requireEmailVerification,
          });
          toast('Settings saved');
          reload();
        } catch (err) {
          toastError(err);
        } finally {
          setBusy(false);
        }
      }}>
        <p class="muted">Plan: <strong>{project.plan}</strong></p>
        <Field label="Name" required value={s.name} onInput={(e) => setS({ ...s, name: e.currentTarget.value })} />
        <Field label="Description" value={s.description} onInput={(e) => setS({ ...s, description: e.currentTarget.value })} />
        <Field label="Site URL" type="url" placeholder="https://app.example.com" value={s.siteUrl} onInput={(e) => setS({ ...s, siteUrl: e.currentTarget.value })} />
        <div class="field">
          <label for="origins">Allowed origins for the publishable key (one per line; * for any)</label>
          <textarea id="origins" class="mono" rows={3} value={s.origins} onInput={(e) => setS({ ...s, origins: e.currentTarget.value })} />
        </div>
        <Check label="End-user authentication enabled" checked={s.isAuthEnabled} onChange={(v) => setS({ ...s, isAuthEnabled: v })} />
        <Check label="Require email verification before login" checked={s.requireEmailVerification} onChange={(v) => setS({ ...s, requireEmailVerification: v })} />
        <div class="actions"><button class="btn primary" disabled={busy || !!notAdmin} title={notAdmin} aria-describedby={notAdmin ? 'settings-role' : undefined}>{busy ? 'Saving…' : 'Save settings'}</button></div>
      </form>

      {!notAdmin && <SignInProviders projectId={project._id} />}

      <h2>API keys</h2>
      <p class="muted">Keys are stored hashed and shown once. Rotating one makes the old key fail at once.</p>
      {notAdmin ? (
        <p class="muted" id="keys-role">Key rotation is hidden: {notAdmin}</p>
      ) : (
        <>
          {newKey && <SecretOnce label={`New ${newKey.keyType} key`} value={newKey.apiKey} />}
          <div class="actions start">
            <button type="button" class="btn" onClick={() => setRotate('publishable')}>Rotate publishable key</button>
            <button type="button" class="btn" onClick={() => setRotate('secret')}>Rotate secret key</button>
          </div>
        </>
      )}

      <h2>Danger zone</h2>
      <button type="button" class="btn danger" disabled={!!notOwner} title={notOwner} aria-describedby={notOwner ? 'delete-role' : undefined} onClick={() => setDeleting(true)}>Delete project</button>
      {notOwner && <p class="muted small" id="delete-role">{notOwner}</p>}

      {rotate && (
        <Confirm title={`Rotate the ${rotate} key?`} message={<p>Apps using the current {rotate} key stop working until they get the new one.</p>} action="Rotate"
          onConfirm={async () => {
            const r = await api.post<{ apiKey: string; keyType: string }>(projectPath(project._id, 'api-key'), { keyType: rotate });
            setNewKey(r);
            toast(`${rotate === 'secret' ? 'Secret' : 'Publishable'} key rotated`);
          }}
          onClose={() => setRotate(null)} />
      )}
      {deleting && (
        <Confirm title={`Delete “${project.name}”?`} message={<p>Every collection, document, user, file and mail log of this project is deleted. This cannot be undone.</p>}
          typed={project.name} action="Delete project"
          onConfirm={async () => {
            await api.del(projectPath(project._id));
            toast('Project deleted');
            navigate('#/projects');
          }}
          onClose={() => setDeleting(false)} />
      )}
    </>
  );
}
