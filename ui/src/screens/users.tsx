/** End users of the project: search, sessions (revoke), second factors (see, reset), verify, disable/enable, delete. */
import { useState } from 'preact/hooks';
import { api, projectPath } from '../lib/api';
import { dateTime, plural } from '../lib/format';
import { toast, toastError } from '../lib/toast';
import { useLoad } from '../lib/use-load';
import { Confirm, Dialog, Empty, Loadable, PageHead, Pager } from '../components/ui';
import type { SectionProps } from './project-shell';

interface User {
  _id: string;
  email: string;
  name?: string;
  emailVerified: boolean;
  disabled: boolean;
  authProviders: string[];
  createdAt: string;
}
interface Session {
  id: string;
  ip: string | null;
  userAgent: string | null;
  lastUsedAt: string;
  expiresAt: string;
}

interface Factors {
  totp: { confirmed: boolean; createdAt: string } | null;
  passkeys: Array<{ id: string; name: string; createdAt: string; lastUsedAt: string | null }>;
  recoveryCodesLeft: number;
}

const LIMIT = 25;

/** Which second factors a user has (kinds, names, dates; never a secret), and a reset (audited on the server). */
function SecondFactors({ base, user, onClose }: { base: string; user: User; onClose: () => void }) {
  const state = useLoad((signal) => api.get<Factors>(`${base}/${user._id}/factors`, signal), [user._id]);
  const [resetting, setResetting] = useState(false);
  return (
    <Dialog title={`Second factors of ${user.email}`} onClose={onClose} wide>
      <Loadable state={state}>
        {(f) => !f.totp && f.passkeys.length === 0 ? <Empty title="No second factor"><p>This user signs in with one factor.</p></Empty> : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">Added</th><th scope="col">Last used</th></tr></thead>
              <tbody>
                {f.totp && <tr><td>Authenticator app</td><td>{f.totp.confirmed ? '—' : 'set-up not finished'}</td><td>{dateTime(f.totp.createdAt)}</td><td>—</td></tr>}
                {f.passkeys.map((p) => <tr key={p.id}><td>Passkey</td><td>{p.name}</td><td>{dateTime(p.createdAt)}</td><td>{p.lastUsedAt ? dateTime(p.lastUsedAt) : 'never'}</td></tr>)}
              </tbody>
            </table>
            <p>Recovery codes left: {f.recoveryCodesLeft}.</p>
            <div class="actions"><button type="button" class="btn danger" onClick={() => setResetting(true)}>Reset second factors</button></div>
          </>
        )}
      </Loadable>
      {resetting && (
        <Confirm title="Reset second factors?" action="Reset"
          message={<p>The authenticator app, passkeys and recovery codes of <strong>{user.email}</strong> are removed and their sessions drop to one factor. They sign in with their password alone and can enrol again. The reset is recorded in the audit log.</p>}
          onConfirm={async () => { await api.del(`${base}/${user._id}/factors`); toast('Second factors reset'); state.reload(); }} onClose={() => setResetting(false)} />
      )}
    </Dialog>
  );
}

function Sessions({ base, user, onClose }: { base: string; user: User; onClose: () => void }) {
  const state = useLoad((signal) => api.get<{ sessions: Session[] }>(`${base}/${user._id}/sessions`, signal), [user._id]);
  const revoke = async (path: string) => {
    try {
      await api.del(path);
      toast('Revoked');
      state.reload();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <Dialog title={`Sessions of ${user.email}`} onClose={onClose} wide>
      <Loadable state={state}>
        {({ sessions }) => sessions.length === 0 ? <Empty title="No live sessions" /> : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">IP</th><th scope="col">Browser</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{sessions.map((s) => (
                <tr key={s.id}>
                  <td>{dateTime(s.lastUsedAt)}</td><td>{dateTime(s.expiresAt)}</td><td>{s.ip ?? '—'}</td><td class="clip">{s.userAgent ?? '—'}</td>
                  <td><button type="button" class="btn" onClick={() => revoke(`${base}/${user._id}/sessions/${s.id}`)}>Revoke</button></td>
                </tr>
              ))}</tbody>
            </table>
            <div class="actions"><button type="button" class="btn danger" onClick={() => revoke(`${base}/${user._id}/sessions`)}>Revoke all</button></div>
          </>
        )}
      </Loadable>
    </Dialog>
  );
}

export default function Users({ project }: SectionProps) {
  const base = projectPath(project._id, 'users');
  const [q, setQ] = useState('');
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const state = useLoad((signal) => api.get<{ items: User[]; total: number }>(`${base}?page=${page}&limit=${LIMIT}${search ? `&q=${encodeURIComponent(search)}` : ''}`, signal), [page, search]);
  const [sessionsOf, setSessionsOf] = useState<User | null>(null);
  const [factorsOf, setFactorsOf] = useState<User | null>(null);
  const [deleting, setDeleting] = useState<User | null>(null);
  const act = async (path: string, message: string) => {
    try {
      await api.post(path);
      toast(message);
      state.reload();
    } catch (e) {
      toastError(e);
    }
  };
  return (
    <>
      <PageHead title="Users" />
      <form class="inline-form" role="search" onSubmit={(e) => { e.preventDefault(); setPage(1); setSearch(q.trim()); }}>
        <label for="user-search">Search users</label>
        <input id="user-search" type="search" class="grow" placeholder="email, name, username or id" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <button class="btn">Search</button>
      </form>
      <Loadable state={state}>
        {({ items, total }) => items.length === 0 ? (
          <Empty title={search ? 'No user matches' : 'No end users yet'}>
            <p>{search ? 'Try part of the email.' : 'Users appear here when they sign up through /api/userAuth (a users collection is needed).'}</p>
          </Empty>
        ) : (
          <>
            <table class="grid">
              <thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Signed up</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
              <tbody>{items.map((u) => (
                <tr key={u._id} class={u.disabled ? 'deleted' : undefined}>
                  <td>{u.email}</td>
                  <td>{u.name ?? '—'}</td>
                  <td>{u.disabled ? 'disabled' : u.emailVerified ? 'verified' : 'unverified'}</td>
                  <td>{dateTime(u.createdAt)}</td>
                  <td class="row-actions">
                    <button type="button" class="btn" onClick={() => setSessionsOf(u)}>Sessions</button>
                    <button type="button" class="btn" onClick={() => setFactorsOf(u)}>Second factors</button>
                    {!u.emailVerified && <button type="button" class="btn" onClick={() => act(`${base}/${u._id}/verify`, 'User verified')}>Verify</button>}
                    {u.disabled
                      ? <button type="button" class="btn" onClick={() => act(`${base}/${u._id}/enable`, 'User enabled')}>Enable</button>
                      : <button type="button" class="btn" onClick={() => act(`${base}/${u._id}/disable`, 'User disabled, sessions revoked')}>Disable</button>}
                    <button type="button" class="btn danger" onClick={() => setDeleting(u)}>Delete</button>
                  </td>
                </tr>
              ))}</tbody>
            </table>
            <Pager status={`${plural(total, 'user')} · page ${page}`} hasPrevious={page > 1} hasNext={page * LIMIT < total}
              onPrevious={() => setPage(page - 1)} onNext={() => setPage(page + 1)} />
          </>
        )}
      </Loadable>
      {sessionsOf && <Sessions base={base} user={sessionsOf} onClose={() => setSessionsOf(null)} />}
      {factorsOf && <SecondFactors base={base} user={factorsOf} onClose={() => setFactorsOf(null)} />}
      {deleting && (
        <Confirm title="Delete user?" message={<p><strong>{deleting.email}</strong> and their sessions are deleted. This cannot be undone.</p>} action="Delete user"
          onConfirm={async () => { await api.del(`${base}/${deleting._id}`); toast('User deleted'); state.reload(); }} onClose={() => setDeleting(null)} />
      )}
    </>
  );
}
