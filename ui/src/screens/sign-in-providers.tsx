/**
 * Project settings → OpenID Connect sign-in providers: any number, from presets (Apple,
 * Microsoft, GitLab, Discord, Keycloak, any OIDC issuer). The client secret (Apple: the .p8
 * key) is write-only: the API answers only whether one is stored.
 */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Check, Confirm, Empty, Field, Loadable, Select } from '../components/ui';

interface Preset { preset: string; label: string; defaultIssuer: string | null; issuerHint: string; scopes: string[]; oidc: boolean; formPost: boolean; keySecret: boolean }
interface Provider {
  id: string; preset: string; label: string; issuer: string; clientId: string; scopes: string[]; enabled: boolean;
  teamId?: string; keyId?: string; hasClientSecret: boolean; redirectUri: string; updatedAt: string;
}

export function SignInProviders({ projectId }: { projectId: string }) {
  const base = projectPath(projectId, 'auth', 'oidc');
  const state = useLoad((s) => api.get<{ providers: Provider[]; presets: Preset[] }>(base, s), [projectId]);
  const [editing, setEditing] = useState<Provider | 'new' | null>(null);
  const [deleting, setDeleting] = useState<Provider | null>(null);
  return (
    <section aria-labelledby="oidc-head">
      <h2 id="oidc-head">Sign-in providers (OpenID Connect)</h2>
      <p class="muted">Apps start a sign-in at <code>/api/userAuth/social/&lt;id&gt;/start?key=…</code>, as for GitHub and Google.</p>
      <Loadable state={state}>
        {({ providers, presets }) => editing ? (
          <ProviderForm base={base} presets={presets} provider={editing === 'new' ? null : editing} onDone={() => { setEditing(null); state.reload(); }} />
        ) : (
          <>
            {providers.length === 0 ? <Empty title="No OpenID Connect providers" /> : (
              <table class="grid">
                <thead><tr><th scope="col">Id</th><th scope="col">Provider</th><th scope="col">Issuer</th><th scope="col">Status</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
                <tbody>{providers.map((p) => (
                  <tr key={p.id}>
                    <td class="mono">{p.id}</td><td>{p.label}</td><td class="mono">{p.issuer}</td>
                    <td>{p.enabled ? 'enabled' : 'disabled'}{p.hasClientSecret ? '' : ' · no secret'}</td>
                    <td class="row-actions">
                      <button type="button" class="btn" onClick={() => setEditing(p)}>Edit</button>
                      <button type="button" class="btn danger" onClick={() => setDeleting(p)}>Delete</button>
                    </td>
                  </tr>
                ))}</tbody>
              </table>
            )}
            <div class="actions start"><button type="button" class="btn" onClick={() => setEditing('new')}>Add provider</button></div>
          </>
        )}
      </Loadable>
      {deleting && (
        <Confirm title={`Delete ${deleting.label}?`} message={<p>Users who signed in with it keep their accounts but can no longer use it.</p>} action="Delete provider"
          onConfirm={async () => { await api.del(`${base}/${encodeURIComponent(deleting.id)}`); toast('Provider deleted'); state.reload(); }}
          onClose={() => setDeleting(null)} />
      )}
    </section>
  );
}

function ProviderForm({ base, presets, provider, onDone }: { base: string; presets: Preset[]; provider: Provider | null; onDone: () => void }) {
  const [f, setF] = useState({
    id: provider?.id ?? '',
    preset: provider?.preset ?? 'oidc',
    label: provider?.label ?? '',
    issuer: provider?.issuer ?? '',
    clientId: provider?.clientId ?? '',
    clientSecret: '',
    scopes: provider?.scopes.join(' ') ?? '',
    enabled: provider?.enabled ?? true,
    teamId: provider?.teamId ?? '',
    keyId: provider?.keyId ?? '',
  });
  const [busy, setBusy] = useState(false);
  const preset = presets.find((p) => p.preset === f.preset) ?? presets[0]!;
  return (
    <form onSubmit={async (e) => {
      e.preventDefault();
      setBusy(true);
      try {
        await api.put(`${base}/${encodeURIComponent(f.id)}`, {
          preset: f.preset,
          ...(f.label ? { label: f.label } : {}),
          ...(f.issuer ? { issuer: f.issuer } : {}),
          clientId: f.clientId,
          ...(f.clientSecret ? { clientSecret: f.clientSecret } : {}),
          ...(f.scopes.trim() ? { scopes: f.scopes.trim().split(/\s+/) } : {}),
          enabled: f.enabled,
          ...(preset.keySecret ? { teamId: f.teamId, keyId: f.keyId } : {}),
        });
        toast('Provider saved');
        onDone();
      } catch (err) {
        toastError(err);
      } finally {
        setBusy(false);
      }
    }}>
      <Select label="Preset" value={f.preset} options={presets.map((p) => ({ value: p.preset, label: p.label }))} onChange={(v) => provider ? undefined : setF({ ...f, preset: v, id: f.id || v })} />
      <Field label="Id (in the sign-in URL)" required pattern="[a-z][a-z0-9\-]{0,39}" disabled={!!provider} value={f.id} onInput={(e) => setF({ ...f, id: e.currentTarget.value })} />
      <Field label="Button label" placeholder={preset.label} value={f.label} onInput={(e) => setF({ ...f, label: e.currentTarget.value })} />
      <Field label="Issuer URL" type="url" required={!preset.defaultIssuer} placeholder={preset.defaultIssuer ?? preset.issuerHint} value={f.issuer} onInput={(e) => setF({ ...f, issuer: e.currentTarget.value })} />
      <Field label={preset.keySecret ? 'Services ID (client id)' : 'Client id'} required value={f.clientId} onInput={(e) => setF({ ...f, clientId: e.currentTarget.value })} />
      {preset.keySecret ? (
        <>
          <Field label="Team id" required value={f.teamId} onInput={(e) => setF({ ...f, teamId: e.currentTarget.value })} />
          <Field label="Key id" required value={f.keyId} onInput={(e) => setF({ ...f, keyId: e.currentTarget.value })} />
          <div class="field">
            <label for="oidc-key">Private key (.p8){provider?.hasClientSecret ? ' — leave empty to keep the stored key' : ''}</label>
            <textarea id="oidc-key" class="mono" rows={5} autoComplete="off" value={f.clientSecret} onInput={(e) => setF({ ...f, clientSecret: e.currentTarget.value })} />
          </div>
        </>
      ) : (
        <Field label="Client secret" type="password" autoComplete="off" placeholder={provider?.hasClientSecret ? 'leave empty to keep the stored secret' : ''} value={f.clientSecret} onInput={(e) => setF({ ...f, clientSecret: e.currentTarget.value })} />
      )}
      <Field label="Scopes (space-separated)" placeholder={preset.scopes.join(' ')} value={f.scopes} onInput={(e) => setF({ ...f, scopes: e.currentTarget.value })} />
      <Check label="Enabled" checked={f.enabled} onChange={(v) => setF({ ...f, enabled: v })} />
      {provider && <p class="muted">Callback URL to register with the provider: <code>{provider.redirectUri}</code></p>}
      {f.preset === 'microsoft' && <p class="muted">Add the optional ID-token claim <code>xms_edov</code> in the app registration: without it Microsoft emails are not taken as verified.</p>}
      <div class="actions"><button type="button" class="btn" onClick={onDone}>Cancel</button><button class="btn primary" disabled={busy}>{busy ? 'Saving…' : 'Save provider'}</button></div>
    </form>
  );
}
