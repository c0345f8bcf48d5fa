/**
 * The operator's own sessions (Account screen): every live sign-in with its device, address and
 * last use, this one marked; revoke one or every other. A revoked session ends at its next
 * request (docs/operators-and-projects.md "Your sessions"); revoking this one signs out here.
 */
import { api } from '../lib/api';
import { dateTime } from '../lib/format';
import { navigate } from '../lib/router';
import { me } from '../lib/session';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Loadable } from '../components/ui';

interface OperatorSession {
  id: string;
  current: boolean;
  device: string | null;
  ip: string | null;
  methods: string[];
  signedInAt: string;
  lastUsedAt: string;
}

const METHOD_NAMES: Record<string, string> = {
  pwd: 'password', otp: 'emailed code', oauth: 'GitHub', totp: 'authenticator app', passkey: 'passkey', recovery: 'recovery code',
};

export function Sessions() {
  const state = useLoad((signal) => api.get<{ sessions: OperatorSession[] }>('/api/auth/sessions', signal), []);
  const revoke = async (s: OperatorSession) => {
    try {
      await api.del(`/api/auth/sessions/${encodeURIComponent(s.id)}`);
      if (s.current) {
        me.value = null;
        navigate('#/login');
        return;
      }
      toast('Session revoked');
      state.reload();
    } catch (err) {
      toastError(err);
    }
  };
  return (
    <Loadable state={state}>
      {({ sessions }) => (
        <section aria-labelledby="sessions-title">
          <h2 id="sessions-title">Sessions</h2>
          <p class="muted">Where you are signed in. Revoking a session signs that browser out at its next request.</p>
          <table class="grid">
            <thead><tr><th scope="col">Device</th><th scope="col">Address</th><th scope="col">Signed in</th><th scope="col">Last active</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>{sessions.map((s) => (
              <tr key={s.id}>
                <td>{s.device ?? 'Unknown device'}{s.current && <> <span class="badge">This session</span></>}
                  <div class="muted small">with {s.methods.map((m) => METHOD_NAMES[m] ?? m).join(' + ') || 'unknown'}</div></td>
                <td>{s.ip ?? '—'}</td>
                <td>{dateTime(s.signedInAt)}</td>
                <td>{dateTime(s.lastUsedAt)}</td>
                <td class="row-actions">
                  <button type="button" class="btn" aria-label={s.current ? 'Sign out (revoke this session)' : `Revoke the session on ${s.device ?? 'an unknown device'} from ${s.ip ?? 'an unknown address'}`} onClick={() => void revoke(s)}>
                    {s.current ? 'Sign out' : 'Revoke'}
                  </button>
                </td>
              </tr>
            ))}</tbody>
          </table>
          {sessions.some((s) => !s.current) && (
            <div class="actions">
              <button type="button" class="btn danger" onClick={async () => {
                try {
                  const r = await api.post<{ revoked: number }>('/api/auth/sessions/revoke-others');
                  toast(r.revoked === 1 ? '1 other session revoked' : `${r.revoked} other sessions revoked`);
                  state.reload();
                } catch (err) {
                  toastError(err);
                }
              }}>Revoke all other sessions</button>
            </div>
          )}
        </section>
      )}
    </Loadable>
  );
}
