/**
 * GitHub on the Account screen (docs/operators-and-projects.md "Linking and unlinking"): the
 * linked GitHub account with "Unlink", or "Link GitHub", which asks the server for GitHub's URL
 * (a CSRF-checked POST) and sends the browser there; GitHub returns to #/account?linked=github
 * or ?error=<code>.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, request } from '../lib/api';
import { dateTime } from '../lib/format';
import { route, setQuery } from '../lib/router';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Loadable } from '../components/ui';
import { GITHUB_ERRORS } from './auth';

interface Identity {
  provider: 'github';
  email: string | null;
  linkedAt: string;
  lastSignInAt: string;
}

export function LinkedAccounts() {
  const state = useLoad((signal) => api.get<{ identities: Identity[] }>('/api/auth/identities', signal), []);
  const [enabled, setEnabled] = useState(false);
  const query = route.value.query;
  const error = query.get('error');
  useEffect(() => {
    request<{ enabled: boolean }>('GET', '/api/auth/github').then((d) => setEnabled(d.enabled), () => setEnabled(false));
    if (query.get('linked') === 'github') {
      toast('GitHub linked');
      setQuery(new URLSearchParams());
    }
  }, []);
  const link = async () => {
    try {
      const { url } = await api.post<{ url: string }>('/api/auth/github/link');
      location.assign(url);
    } catch (err) {
      toastError(err);
    }
  };
  const unlink = async () => {
    if (!confirm('Unlink GitHub? Signing in with GitHub stops until you link it again; your password and sessions stay.')) return;
    try {
      await api.del('/api/auth/identities/github');
      toast('GitHub unlinked');
      state.reload();
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <Loadable state={state}>
      {({ identities }) => {
        const github = identities.find((i) => i.provider === 'github');
        if (!github && !enabled) return null;
        return (
          <section aria-labelledby="github-title">
            <h2 id="github-title">GitHub</h2>
            {error && <p class="form-error" role="alert">{GITHUB_ERRORS[error] ?? `Linking GitHub failed (${error}).`}</p>}
            {github ? (
              <>
                <p>Linked{github.email ? <> as <strong>{github.email}</strong></> : null}; last sign-in with it {dateTime(github.lastSignInAt)}.</p>
                <div class="actions"><button type="button" class="btn" onClick={() => void unlink()}>Unlink GitHub</button></div>
              </>
            ) : (
              <>
                <p class="muted">Sign in with GitHub as well as with your password.</p>
                <div class="actions"><button type="button" class="btn" onClick={() => void link()}>Link GitHub</button></div>
              </>
            )}
          </section>
        );
      }}
    </Loadable>
  );
}
